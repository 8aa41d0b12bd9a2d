package node

import (
	"context"
	"math/rand/v2"
	"net"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/shuffledp/shuffledp/data"
	"github.com/shuffledp/shuffledp/ledger"
	"github.com/shuffledp/shuffledp/model"
	"github.com/shuffledp/shuffledp/pki"
	pb "github.com/shuffledp/shuffledp/proto/shuffledp/v1"
	"github.com/shuffledp/shuffledp/protocol"
	"github.com/shuffledp/shuffledp/training"
)

// cpuTime returns the process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkShufflerRound measures the shuffler node's side of a round at
// the NeurIPS'21 Fig. 3 scale (k = 10,000 of n = 60,000): one op is a
// round of k pre-sealed reports (75 bytes: an 8-byte report and HPKE's 67)
// streamed over gRPC with TLS on loopback, each authenticated (HMAC),
// header-checked and submitted, then the release: the durable claim of the
// k report ids, the debit, Fisher–Yates and the forward of the batch to a
// stand-in server. Report ids are made fresh per round outside the timer
// (a sealed report's id is random; sealing itself is the client's cost).
// Metrics: reports/s (wall) and reports per CPU-second of the whole
// process, which also pays the test client's marshalling, TLS and the
// stand-in server: a lower bound on the shuffler's own reports/s per core.
func BenchmarkShufflerRound(b *testing.B) {
	for _, backend := range []string{"memory", "sqlite"} {
		b.Run(backend, func(b *testing.B) {
			const n, k = 60000, 10000
			var store ledger.Backend
			if backend == "sqlite" {
				st, err := ledger.OpenSQLite(context.Background(), filepath.Join(b.TempDir(), ledger.FileName), ledger.SQLiteOptions{})
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { st.Close() })
				store = st
			}
			r := newAttackRig(b, rigOptions{n: n, k: k, rounds: b.N + 1, store: store})
			ctx := context.Background()
			w := r.work(ctx)
			tmpl := r.seal(1, 0)
			ids := rand.NewChaCha8([32]byte{1})
			reports := func(a *pb.Assignment) []*pb.Report {
				reps := make([]*pb.Report, len(a.Clients))
				for i, c := range a.Clients {
					s := append([]byte(nil), tmpl...)
					ids.Read(s[2 : 2+protocol.ReportIDSize])
					reps[i] = &pb.Report{Client: c, Token: r.enr.Token(c), Sealed: s}
				}
				return reps
			}
			// One round untimed: registration, first model, ledger set-up.
			a := recv(b, w)
			r.submit(ctx, a.Round, reports(a))
			var cpu time.Duration
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				a := recv(b, w)
				reps := reports(a)
				c0 := cpuTime()
				b.StartTimer()
				if ack := r.submit(ctx, a.Round, reps); ack.Accepted != k {
					b.Fatalf("accepted %d of %d", ack.Accepted, k)
				}
				// The release ends when the stand-in server has the batch.
				for len(r.srv.received()) < int(a.Round) {
					time.Sleep(50 * time.Microsecond)
				}
				b.StopTimer()
				cpu += cpuTime() - c0
				b.StartTimer()
			}
			b.StopTimer()
			if got := r.srv.received(); len(got) != b.N+1 {
				b.Fatalf("%d batches forwarded, want %d", len(got), b.N+1)
			}
			b.ReportMetric(float64(k*b.N)/b.Elapsed().Seconds(), "reports/s")
			b.ReportMetric(float64(k*b.N)/cpu.Seconds(), "reports/CPU-s")
		})
	}
}

// BenchmarkNetworkRoundFig3 runs NeurIPS'21 Fig. 3 rounds (cnn-tanh, R_inf
// with the l_inf clamp, C = 0.01, eps0 = 1.5, k = 10,000 of n = 60,000,
// synthetic MNIST-shaped data) through a server node, a shuffler node (its
// ledger in SQLite) and a client pool (2 workers), all in this process over
// gRPC with TLS on loopback; one op is one round as the server sees it,
// from one step to the next (clients' gradients, HPKE seal, shuffler
// checks, claim, debit, shuffle, forward, server checks, ledger record,
// receipt, HPKE open, decode, step). For a CPU profile of where a
// networked round's time goes:
//
//	go test ./node -run '^$' -bench NetworkRoundFig3 -benchtime 3x -cpuprofile cpu.out
//	go tool pprof -top node.test cpu.out
func BenchmarkNetworkRoundFig3(b *testing.B) {
	dir := b.TempDir()
	pkiDir := filepath.Join(dir, "pki")
	if err := pki.Init(pkiDir, nil); err != nil {
		b.Fatal(err)
	}
	lr, _ := training.ParseLRSchedule("0.3")
	const n, k = 60000, 10000
	rounds := b.N + 1 // the first round, with registration, untimed
	cfg := training.Config{Clients: n, Sample: k, Randomizer: "rinf", ClipNorm: "linf", ClampLinf: true,
		Clip: 0.01, Eps0: 1.5, Delta: 1e-5, Epochs: float64(rounds*k) / n, LR: lr, Seed: 1, Workers: 2, EvalEvery: 1 << 20}
	stls, _ := pki.ServerTLS(filepath.Join(pkiDir, pki.RoleServer), pki.RoleServer)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m, err := model.New("cnn-tanh", 784, 10)
	if err != nil {
		b.Fatal(err)
	}
	m.Init(model.NewInitRNG(1))
	loop, err := newServerLoop(ctx, cfg, ServerConfig{Dir: filepath.Join(dir, "server"), Dataset: Dataset{Name: "synthetic", Seed: 1}, TLS: stls},
		m, data.Synthetic(20, 2))
	if err != nil {
		b.Fatal(err)
	}
	defer loop.Close()
	srv := loop.srv
	slis, _ := net.Listen("tcp", "127.0.0.1:0")
	go srv.Serve(slis)
	st, err := ledger.OpenSQLite(ctx, filepath.Join(dir, ledger.FileName), ledger.SQLiteOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	shTLS, _ := pki.ServerTLS(filepath.Join(pkiDir, pki.RoleShuffler), pki.RoleShuffler)
	dialTLS, _ := pki.ClientTLS(filepath.Join(pkiDir, pki.RoleShuffler), pki.RoleShuffler)
	enr, _ := pki.LoadEnroller(pkiDir)
	sh, err := NewShuffler(ShufflerConfig{Server: slis.Addr().String(), ServerTLS: dialTLS, TLS: shTLS, Enroller: enr,
		Store: st, Delta: 1e-5, RoundTimeout: time.Minute, ReleaseWhenComplete: true})
	if err != nil {
		b.Fatal(err)
	}
	hlis, _ := net.Listen("tcp", "127.0.0.1:0")
	shDone := make(chan error, 1)
	go func() { shDone <- sh.Run(ctx, hlis) }()
	ctls, _ := pki.ClientTLS(filepath.Join(pkiDir, pki.RoleClient), pki.RoleClient)
	creds, _ := enr.Enrol(0, n)
	pool, err := NewClientPool(ClientPoolConfig{Shuffler: hlis.Addr().String(), Server: slis.Addr().String(), TLS: ctls, Credentials: creds, Workers: 2})
	if err != nil {
		b.Fatal(err)
	}
	poolDone := make(chan error, 1)
	go func() { poolDone <- pool.Run(ctx) }()
	var cpu time.Duration
	var c0 time.Time
	var cpu0 time.Duration
	done := 0
	_, err = loop.train(ctx, training.Hooks{OnRound: func(training.RoundStats) error {
		done++
		if done == 1 {
			b.ResetTimer()
			c0, cpu0 = time.Now(), cpuTime()
		}
		return nil
	}})
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	cpu = cpuTime() - cpu0
	if done != rounds {
		b.Fatalf("%d rounds, want %d", done, rounds)
	}
	if err := <-poolDone; err != nil {
		b.Fatal(err)
	}
	if err := <-shDone; err != nil {
		b.Fatal(err)
	}
	wall := time.Since(c0)
	b.ReportMetric(float64(k*b.N)/wall.Seconds(), "client-updates/s")
	b.ReportMetric(float64(k*b.N)/cpu.Seconds(), "client-updates/CPU-s")
}
