package node

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/shuffledp/shuffledp/client"
	"github.com/shuffledp/shuffledp/data"
	"github.com/shuffledp/shuffledp/internal/pgtest"
	"github.com/shuffledp/shuffledp/ledger"
	"github.com/shuffledp/shuffledp/model"
	"github.com/shuffledp/shuffledp/pki"
	pb "github.com/shuffledp/shuffledp/proto/shuffledp/v1"
	"github.com/shuffledp/shuffledp/protocol"
	"github.com/shuffledp/shuffledp/randomizer"
	"github.com/shuffledp/shuffledp/training"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// TestClientPoolPostgres runs two rounds with a ClientPool, the shuffler's
// ledger and report ids on a real PostgreSQL server (--ledger postgres://),
// and reads the debits back from it.
func TestClientPoolPostgres(t *testing.T) {
	ctx := context.Background()
	url := pgtest.NewSchema(t)
	store, err := ledger.OpenStore(ctx, url, ledger.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	sh, srvAddr, shAddr, pkiDir, done := startNodes(t, store)
	tc, _ := pki.ClientTLS(filepath.Join(pkiDir, pki.RoleClient), pki.RoleClient)
	enr, _ := pki.LoadEnroller(pkiDir)
	creds, err := enr.Enrol(0, 20)
	if err != nil {
		t.Fatal(err)
	}
	pool, err := NewClientPool(ClientPoolConfig{Shuffler: shAddr, Server: srvAddr, TLS: tc, Credentials: creds, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := pool.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("server: %v", err)
	}
	runs, err := store.Runs(ctx)
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %v, %v", runs, err)
	}
	sum, err := ledger.Summarize(ctx, store, runs[0], 1e-5, false)
	if err != nil {
		t.Fatal(err)
	}
	if s := sh.Stats(); sum.Rounds != 2 || s.Released != 2 || pool.Reports() != 10 {
		t.Fatalf("ledger %d rounds; shuffler %+v; pool %d reports", sum.Rounds, s, pool.Reports())
	}
}

// startNodes starts a server node (2 rounds of 5 out of 20 clients) and a
// shuffler node in process, on loopback listeners, and returns the
// shuffler, the two addresses, the PKI directory and a channel with the
// server's result.
func startNodes(t *testing.T, store ledger.Backend) (*Shuffler, string, string, string, chan error) {
	t.Helper()
	return startNodesWith(t, store, nodeOptions{})
}

// nodeOptions vary startNodesWith's nodes.
type nodeOptions struct {
	// train changes the server's configuration (nil: none).
	train func(*training.Config)
	// shuffler changes the shuffler's configuration (nil: none); its
	// Delta is 1e-5 and its target none before.
	shuffler func(*ShufflerConfig)
	// server changes the server's configuration (nil: none).
	server func(*ServerConfig)
	// shufflerErr receives the shuffler's Run result (nil: dropped).
	shufflerErr chan error
	// model is the server's model (nil: logreg on 784 inputs, 10
	// classes); loop are options of its training loop.
	model model.Model
	loop  []training.Option
}

func startNodesWith(t *testing.T, store ledger.Backend, o nodeOptions) (*Shuffler, string, string, string, chan error) {
	t.Helper()
	dir := t.TempDir()
	pkiDir := filepath.Join(dir, "pki")
	if err := pki.Init(pkiDir, nil); err != nil {
		t.Fatal(err)
	}
	lr, err := training.ParseLRSchedule("0.3")
	if err != nil {
		t.Fatal(err)
	}
	cfg := training.Config{Clients: 20, Sample: 5, Randomizer: "rinf", Clip: 0.01, Eps0: 2, Delta: 1e-5, Epochs: 0.5, LR: lr, Seed: 1, Workers: 1}
	if o.train != nil {
		o.train(&cfg)
	}
	stls, err := pki.ServerTLS(filepath.Join(pkiDir, pki.RoleServer), pki.RoleServer)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	scfg := ServerConfig{Dir: filepath.Join(dir, "server"), Dataset: Dataset{Name: "synthetic", Seed: 1}, TLS: stls}
	if o.server != nil {
		o.server(&scfg)
	}
	m := o.model
	test := data.Synthetic(50, 2)
	if m == nil {
		if m, err = model.New("logreg", 784, 10); err != nil {
			t.Fatal(err)
		}
	} else {
		test = nil
	}
	loop, err := newServerLoop(ctx, cfg, scfg, m, test, o.loop...)
	if err != nil {
		t.Fatal(err)
	}
	srv := loop.srv
	trained, training0 := make(chan struct{}), false
	t.Cleanup(func() { // stop training before the session closes
		cancel()
		if training0 {
			<-trained
		}
		loop.Close()
	})
	slis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(slis)
	done := make(chan error, 1)
	training0 = true
	go func() {
		defer close(trained)
		_, err := loop.train(ctx, training.Hooks{})
		done <- err
	}()

	shTLS, _ := pki.ServerTLS(filepath.Join(pkiDir, pki.RoleShuffler), pki.RoleShuffler)
	dialTLS, _ := pki.ClientTLS(filepath.Join(pkiDir, pki.RoleShuffler), pki.RoleShuffler)
	enr, err := pki.LoadEnroller(pkiDir)
	if err != nil {
		t.Fatal(err)
	}
	shcfg := ShufflerConfig{Server: slis.Addr().String(), ServerTLS: dialTLS, TLS: shTLS, Enroller: enr,
		Store: store, Delta: 1e-5, RoundTimeout: time.Minute, ReleaseWhenComplete: true}
	if o.shuffler != nil {
		o.shuffler(&shcfg)
	}
	sh, err := NewShuffler(shcfg)
	if err != nil {
		t.Fatal(err)
	}
	hlis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		err := sh.Run(ctx, hlis)
		if o.shufflerErr != nil {
			o.shufflerErr <- err
		}
	}()
	return sh, slis.Addr().String(), hlis.Addr().String(), pkiDir, done
}

// TestShufflerRejects drives a shuffler node by hand with one honest
// report per sampled client and every kind of bad report, and checks the
// acknowledgements, the counters and that both rounds are released.
func TestShufflerRejects(t *testing.T) {
	sh, srvAddr, shAddr, pkiDir, done := startNodes(t, ledger.NewMemoryStore())
	ctx := context.Background()
	tc, err := pki.ClientTLS(filepath.Join(pkiDir, pki.RoleClient), pki.RoleClient)
	if err != nil {
		t.Fatal(err)
	}
	sconn, err := dial(srvAddr, tc, pki.RoleServer)
	if err != nil {
		t.Fatal(err)
	}
	defer sconn.Close()
	srv := pb.NewServerClient(sconn)
	spec, err := srv.GetRun(ctx, &pb.GetRunRequest{})
	if err != nil {
		t.Fatal(err)
	}
	// Only the shuffler may pull the model.
	if _, err := srv.GetModel(ctx, &pb.GetModelRequest{Run: spec.Config.Run, AfterVersion: -1}); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("GetModel without the shuffler's certificate: %v, want PermissionDenied", err)
	}
	run, err := runConfigFromPB(spec.Config)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := keyConfigs(spec)
	if err != nil {
		t.Fatal(err)
	}
	enr, _ := pki.LoadEnroller(pkiDir)
	conn, err := dial(shAddr, tc, pki.RoleShuffler)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	shuf := pb.NewShufflerClient(conn)
	// A Work request with a forged credential is refused.
	bad, err := workCall(asClient(ctx, enr, 0), shuf, &pb.WorkRequest{Run: run.Run, Clients: []*pb.ClientCredential{{Client: 3, Token: enr.Token(4)}}})
	if err == nil {
		_, err = bad.Recv()
	}
	if status.Code(err) != codes.Unauthenticated {
		t.Fatalf("Work with client 4's token for client 3: %v, want Unauthenticated", err)
	}
	req := &pb.WorkRequest{Run: run.Run}
	for c := range int64(20) {
		req.Clients = append(req.Clients, &pb.ClientCredential{Client: c, Token: enr.Token(c)})
	}
	work, err := workCall(asClient(ctx, enr, 0), shuf, req)
	if err != nil {
		t.Fatal(err)
	}
	ds := data.Synthetic(20, 1)
	m, _ := model.New("logreg", 784, 10)
	var kc protocol.KeyConfig
	for _, k := range keys {
		kc = k
	}
	sealer, err := protocol.NewHPKESealer(kc, run.ReportBytes-protocol.HPKEOverhead)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := client.New(run, m, sealer)
	if err != nil {
		t.Fatal(err)
	}
	noise := randomizer.NewCryptoSource()
	var first []byte // a report of round 1, replayed into round 2
	for r := 1; r <= 2; r++ {
		a, err := work.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if a.Finished || len(a.Clients) != 5 || a.Round != int64(r) {
			t.Fatalf("assignment %d: %v", r, a)
		}
		round := protocol.Round{ID: a.Round, Model: protocol.Model{Run: a.Model.Run, Version: a.Model.Version, Params: a.Model.Params}}
		report := func(c int64) []byte {
			s, _, err := cl.Report(&round, client.Example{X: ds.Example(int(c)), Label: ds.Y[c]}, noise)
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
		sampled := map[int64]bool{}
		for _, c := range a.Clients {
			sampled[c] = true
		}
		var unsampled int64
		for sampled[unsampled] {
			unsampled++
		}
		c0 := a.Clients[0]
		honest := make([][]byte, 5)
		for i, c := range a.Clients {
			honest[i] = report(c)
		}
		rep := func(c int64, sealed []byte) *pb.Report {
			return &pb.Report{Client: c, Token: enr.Token(c), Sealed: sealed}
		}
		badKey := append([]byte(nil), honest[0]...)
		badKey[1] = 7
		chunks := []*pb.ReportChunk{
			{Run: run.Run, Round: a.Round, Reports: []*pb.Report{
				{Client: c0, Token: enr.Token(c0 + 1), Sealed: honest[0]}, // unauthenticated
				rep(c0, honest[0][:len(honest[0])-1]),                     // wrong_length
				rep(c0, badKey),                                           // unknown_key
				rep(unsampled, report(unsampled)),                         // not_sampled
			}},
			{Run: run.Run, Round: a.Round + 7, Reports: []*pb.Report{rep(c0, honest[0])}}, // wrong_round
			{Run: run.Run, Round: a.Round, Reports: []*pb.Report{
				rep(a.Clients[0], honest[0]), rep(a.Clients[1], honest[1]), rep(a.Clients[2], honest[2]),
				rep(a.Clients[0], honest[0]),  // replay (same report id)
				rep(a.Clients[0], report(c0)), // duplicate (client reported)
				rep(a.Clients[3], honest[3]),
			}},
		}
		want := map[string]int64{"unauthenticated": 1, "wrong_length": 1, "unknown_key": 1, "not_sampled": 1, "wrong_round": 1, "replay": 1, "duplicate": 1}
		if r == 2 {
			chunks[2].Reports = append(chunks[2].Reports, rep(a.Clients[1], first)) // round 1's report, replayed
			want["replay"]++
		}
		chunks = append(chunks, &pb.ReportChunk{Run: run.Run, Round: a.Round, Reports: []*pb.Report{rep(a.Clients[4], honest[4])}})
		st, err := shuf.Submit(asClient(ctx, enr, 0))
		if err != nil {
			t.Fatal(err)
		}
		for _, ch := range chunks {
			if err := st.Send(ch); err != nil {
				t.Fatal(err)
			}
		}
		ack, err := st.CloseAndRecv()
		if err != nil {
			t.Fatal(err)
		}
		if ack.Accepted != 5 || len(ack.Rejected) != len(want) {
			t.Fatalf("round %d: accepted %d, rejected %v; want 5 and %v", r, ack.Accepted, ack.Rejected, want)
		}
		for k, v := range want {
			if ack.Rejected[k] != v {
				t.Errorf("round %d: rejected %s = %d, want %d", r, k, ack.Rejected[k], v)
			}
		}
		first = honest[0]
	}
	if err := <-done; err != nil {
		t.Fatalf("server: %v", err)
	}
	a, err := work.Recv()
	if err != nil || !a.Finished {
		t.Fatalf("after the last round: %v, %v; want finished", a, err)
	}
	s := sh.Stats()
	if s.Released != 2 || s.Discarded != 0 || s.Accepted != 10 || s.Forwarded != 10 || s.Rejected[RejectReplay] != 3 || s.Rejected[RejectUnauthenticated] != 3 {
		t.Fatalf("stats %+v", s)
	}
}

// TestCheckBatch checks the server's refusals of malformed batches.
func TestCheckBatch(t *testing.T) {
	k1, _ := protocol.GenerateKey(1)
	k2, _ := protocol.GenerateKey(2)
	s1, _ := protocol.NewHPKESealer(k1.Config, 3)
	s2, _ := protocol.NewHPKESealer(k2.Config, 3)
	run := protocol.RunConfig{Run: "r", PerRound: 3, MinBatch: 2, ReportBytes: 3 + protocol.HPKEOverhead}
	b := protocol.Binding{Run: "r", Round: 1}
	seal := func(s *protocol.HPKESealer) []byte { x, _ := s.Seal(b, []byte{1, 2, 3}); return x }
	a, c := seal(s1), seal(s1)
	cat := func(rs ...[]byte) []byte {
		var out []byte
		for _, r := range rs {
			out = append(out, r...)
		}
		return out
	}
	keys := map[uint8]bool{1: true, 2: true}
	cases := []struct {
		name string
		b    *pb.Batch
		ok   bool
	}{
		{"good", &pb.Batch{Run: "r", Round: 1, ReportBytes: int64(run.ReportBytes), Reports: cat(a, c)}, true},
		{"other run", &pb.Batch{Run: "x", Round: 1, ReportBytes: int64(run.ReportBytes), Reports: cat(a, c)}, false},
		{"repeated report id", &pb.Batch{Run: "r", Round: 1, ReportBytes: int64(run.ReportBytes), Reports: cat(a, a)}, false},
		{"mixed key ids", &pb.Batch{Run: "r", Round: 1, ReportBytes: int64(run.ReportBytes), Reports: cat(a, seal(s2))}, false},
		{"below min batch", &pb.Batch{Run: "r", Round: 1, ReportBytes: int64(run.ReportBytes), Reports: a}, false},
		{"above k", &pb.Batch{Run: "r", Round: 1, ReportBytes: int64(run.ReportBytes), Reports: cat(a, c, seal(s1), seal(s1))}, false},
		{"ragged", &pb.Batch{Run: "r", Round: 1, ReportBytes: int64(run.ReportBytes), Reports: cat(a, c)[1:]}, false},
		{"wrong length", &pb.Batch{Run: "r", Round: 1, ReportBytes: int64(run.ReportBytes) + 1, Reports: cat(a, c)}, false},
		{"round 0", &pb.Batch{Run: "r", Round: 0, ReportBytes: int64(run.ReportBytes), Reports: cat(a, c)}, false},
	}
	for _, tc := range cases {
		_, err := CheckBatch(run, keys, tc.b)
		if (err == nil) != tc.ok {
			t.Errorf("%s: err %v, want ok %v", tc.name, err, tc.ok)
		}
	}
	if _, err := CheckBatch(run, map[uint8]bool{2: true}, &pb.Batch{Run: "r", Round: 1, ReportBytes: int64(run.ReportBytes), Reports: cat(a, c)}); err == nil {
		t.Error("a batch sealed to a key the server does not hold was accepted")
	}
}
