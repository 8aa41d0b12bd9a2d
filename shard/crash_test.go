package shard

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/internal/faultpoint"
	"github.com/shuffledp/shuffledp/internal/pgtest"
	"github.com/shuffledp/shuffledp/ledger"
	"github.com/shuffledp/shuffledp/protocol"
	"github.com/shuffledp/shuffledp/route"
	"github.com/shuffledp/shuffledp/shuffler"
)

// replicaEnv carries a helper process's configuration (JSON).
const replicaEnv = "SHUFFLEDP_SHARD_REPLICA"

// replicaSpec configures a replica helper process.
type replicaSpec struct {
	URL    string  `json:"url"`
	Run    string  `json:"run"`
	N      int64   `json:"n"`
	K      int64   `json:"k"`
	Shards int     `json:"shards"`
	Shard  int     `json:"shard"`
	Eps0   float64 `json:"eps0"`
	Delta  float64 `json:"delta"`
	Coord  string  `json:"coord"`
	// Leased is a file the replica writes (the time, in Unix
	// nanoseconds) once it holds the lease.
	Leased string `json:"leased"`
	// TTL is the lease's TTL (0: DefaultLeaseTTL).
	TTL time.Duration `json:"ttl"`
}

// testRun is the public configuration of the crash tests' runs: one
// coordinate, clipped in l_inf, randomized by R_inf (on one coordinate:
// binary randomized response of the gradient's sign), reports in the
// clear (Plaintext: the tests check the shuffler side, not sealing).
func testRun(run string, n, k int64, eps0 float64) protocol.RunConfig {
	return protocol.RunConfig{Run: run, Model: "logreg", Dim: 1, Randomizer: "rinf", ClipNorm: protocol.NormLInf,
		Clip: 1, Eps0: eps0, Population: int(n), PerRound: int(k), MinBatch: 1, ReportBytes: 1}
}

// TestReplicaProcess is the body of a replica process of the crash tests
// (the test binary run again with replicaEnv set); otherwise it is skipped.
func TestReplicaProcess(t *testing.T) {
	raw := os.Getenv(replicaEnv)
	if raw == "" {
		t.Skip("helper process of the shard crash tests")
	}
	var sp replicaSpec
	if err := json.Unmarshal([]byte(raw), &sp); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	plan, err := Split(sp.Run, sp.N, sp.K, sp.Shards)
	if err != nil {
		t.Fatal(err)
	}
	store, err := ledger.OpenPostgres(ctx, sp.URL, ledger.PostgresOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	// SIMULATION of the clients: client c holds the bit c mod 2 and
	// reports binary randomized response of it at eps0, from a seeded
	// generator (the tests check the shuffler's side).
	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(uint64(os.Getpid()), uint64(sp.Shard)))
	report := func(_ context.Context, _ protocol.Round, c int64) ([]byte, error) {
		mu.Lock()
		defer mu.Unlock()
		bit := byte(c % 2)
		if rng.Float64() >= math.Exp(sp.Eps0)/(math.Exp(sp.Eps0)+1) {
			bit ^= 1
		}
		return []byte{bit}, nil
	}
	err = RunReplica(ctx, ReplicaConfig{Plan: plan, Shard: sp.Shard, Run: testRun(sp.Run, sp.N, sp.K, sp.Eps0),
		Store: store, LeaseURL: sp.URL, LeaseTTL: sp.TTL, Delta: sp.Delta, Coord: httpCoord{base: sp.Coord, run: sp.Run}, Report: report,
		Leased: func(*Lease) {
			if err := os.WriteFile(sp.Leased, []byte(strconv.FormatInt(time.Now().UnixNano(), 10)), 0o600); err != nil {
				t.Fatal(err)
			}
		},
		Log: log.New(os.Stderr, fmt.Sprintf("replica %d (shard %d): ", os.Getpid(), sp.Shard), log.Lmicroseconds)})
	if err != nil {
		t.Fatal(err)
	}
}

// httpCoord is a replica's Coordinator over HTTP to the test's Collector.
type httpCoord struct{ base, run string }

func (h httpCoord) Next(ctx context.Context, i int) (int64, bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/next?shard=%d", h.base, i), nil)
	if err != nil {
		return 0, false, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, false, err
	}
	defer resp.Body.Close()
	var a struct {
		Round int64 `json:"round"`
		Done  bool  `json:"done"`
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return 0, false, fmt.Errorf("next: %s: %s", resp.Status, b)
	}
	if err := json.NewDecoder(resp.Body).Decode(&a); err != nil {
		return 0, false, err
	}
	return a.Round, a.Done, nil
}

func (h httpCoord) Deliver(ctx context.Context, i int, round int64, b protocol.Batch) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost,
		fmt.Sprintf("%s/deliver?shard=%d&round=%d&id=%d", h.base, i, round, b.Round), bytes.NewReader(bytes.Join(b.Reports, nil)))
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(resp.Body)
	switch resp.StatusCode {
	case http.StatusOK:
		return nil
	case http.StatusConflict:
		return fmt.Errorf("deliver: %s: %w", msg, ErrAlreadyDelivered)
	}
	return fmt.Errorf("deliver: %s: %s", resp.Status, msg)
}

// collectorHandler serves a Collector to the replica processes: GET
// /next?shard=I (long poll) and POST /deliver?shard=I&round=T&id=R (the
// body: the batch's one-byte reports; id the shard's ledger round).
func collectorHandler(c *Collector, plan Plan) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /next", func(w http.ResponseWriter, r *http.Request) {
		i, _ := strconv.Atoi(r.URL.Query().Get("shard"))
		t, done, err := c.Next(r.Context(), i)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"round": t, "done": done})
	})
	mux.HandleFunc("POST /deliver", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		i, _ := strconv.Atoi(q.Get("shard"))
		t, _ := strconv.ParseInt(q.Get("round"), 10, 64)
		id, _ := strconv.ParseInt(q.Get("id"), 10, 64)
		body, err := io.ReadAll(r.Body)
		if err != nil || i < 0 || i >= len(plan.Parts) {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		b := protocol.Batch{Run: plan.Parts[i].Run, Round: id}
		for j := range body {
			b.Reports = append(b.Reports, body[j:j+1:j+1])
		}
		switch err := c.Offer(i, t, b); {
		case errors.Is(err, ErrAlreadyDelivered):
			http.Error(w, err.Error(), http.StatusConflict)
		case err != nil:
			http.Error(w, err.Error(), http.StatusBadRequest)
		}
	})
	return mux
}

// replicaProc is a running replica process.
type replicaProc struct {
	cmd    *exec.Cmd
	leased string
	out    *bytes.Buffer
	done   chan error
	// exited is when the process was reaped (set before done is sent).
	exited time.Time
}

func startReplica(t *testing.T, sp replicaSpec, env ...string) *replicaProc {
	t.Helper()
	raw, err := json.Marshal(sp)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestReplicaProcess$", "-test.v")
	cmd.Env = append(append(os.Environ(), replicaEnv+"="+string(raw)), env...)
	p := &replicaProc{cmd: cmd, leased: sp.Leased, out: &bytes.Buffer{}, done: make(chan error, 1)}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		err := cmd.Wait()
		p.exited = time.Now()
		p.done <- err
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-p.done
		if t.Failed() {
			t.Logf("replica %d (shard %d):\n%s", cmd.Process.Pid, sp.Shard, p.out)
		}
	})
	return p
}

// leasedAt returns when the replica took its lease (zero: not yet).
func (p *replicaProc) leasedAt() time.Time {
	b, err := os.ReadFile(p.leased)
	if err != nil || len(b) == 0 {
		return time.Time{}
	}
	ns, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

func waitLeased(t *testing.T, p *replicaProc, within time.Duration) time.Time {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if at := p.leasedAt(); !at.IsZero() {
			return at
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("replica %d took no lease within %v:\n%s", p.cmd.Process.Pid, within, p.out)
	return time.Time{}
}

// crashCase is one crash test: how the active replica of shard victim
// dies after round killAfter was summed by the server.
type crashCase struct {
	name string
	// fault, if not empty, arms an internal/faultpoint in the victim
	// (NAME@N) instead of an external kill -9.
	fault     string
	killAfter int64
	// stop pauses the victim (SIGSTOP) instead of killing it, with the
	// lease TTL of the victim and the standby; it is resumed (SIGCONT)
	// once the run is finished.
	stop time.Duration
}

// TestShardCrashTakeover runs a sharded run against a real PostgreSQL
// server: three shard replicas (one process each) and a standby for shard
// 1, the server's Collector summing the shards' batches of every round.
// Mid-run the active replica of shard 1 dies by SIGKILL; the standby must
// take the shard over through its lease, the run must finish, every
// (shard, round) must be debited exactly once (the ledger's rows), every
// batch the server summed must be one the ledger debited (same shard
// round and digest) and none twice, and each shard's epsilon must equal
// `account` of its own subsampled shuffle (n_s, k_s) over its rows.
func TestShardCrashTakeover(t *testing.T) {
	for _, c := range []crashCase{
		// kill -9 from outside, wherever the victim is.
		{name: "kill-9", killAfter: 3},
		// SIGKILL between the debit of the victim's 4th round and its
		// delivery: the standby must not release that round again.
		{name: "debited-not-delivered", fault: shuffler.PointDebitedNotForwarded + "@4"},
		// SIGSTOP: the paused victim keeps its connection; its lease's
		// session expires after the TTL (idle_session_timeout, the
		// heartbeat stopped), the standby takes the shard, and the victim,
		// resumed after the run, debits nothing more.
		{name: "sigstop", killAfter: 3, stop: 2 * time.Second},
	} {
		t.Run(c.name, func(t *testing.T) { crashRun(t, c) })
	}
}

func crashRun(t *testing.T, c crashCase) {
	const (
		n, k, shards = 30, 9, 3
		rounds       = 8
		eps0, delta  = 1.0, 1e-5
		victim       = 1
	)
	url := pgtest.NewSchema(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	run := "crash-" + c.name + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	plan, err := Split(run, n, k, shards)
	if err != nil {
		t.Fatal(err)
	}
	coll := NewCollector(plan, rounds)
	srv := httptest.NewServer(collectorHandler(coll, plan))
	defer srv.Close()
	dir := t.TempDir()
	spec := func(i int, name string) replicaSpec {
		sp := replicaSpec{URL: url, Run: run, N: n, K: k, Shards: shards, Shard: i, Eps0: eps0, Delta: delta,
			Coord: srv.URL, Leased: filepath.Join(dir, name)}
		if i == victim {
			sp.TTL = c.stop
		}
		return sp
	}
	start := time.Now()
	active := make([]*replicaProc, shards)
	for i := range shards {
		var env []string
		if i == victim && c.fault != "" {
			env = []string{faultpoint.EnvVar + "=" + c.fault}
		}
		active[i] = startReplica(t, spec(i, fmt.Sprintf("active-%d", i)), env...)
		waitLeased(t, active[i], 20*time.Second)
	}
	standby := startReplica(t, spec(victim, "standby"))
	// The server: sum every round's batches; kill the victim after
	// killAfter rounds.
	type summed struct {
		round   int64
		batches []protocol.Batch
		ones    int
	}
	var got []summed
	var killedAt time.Time
	for len(got) < rounds {
		r, bs, err := coll.Take(ctx)
		if err != nil {
			t.Fatalf("round %d: %v (the standby took no lease: %v)", len(got)+1, err, standby.leasedAt().IsZero())
		}
		s := summed{round: r, batches: bs}
		for _, b := range bs {
			for _, rep := range b.Reports {
				s.ones += int(rep[0])
			}
		}
		got = append(got, s)
		if c.fault == "" && r == c.killAfter {
			if !standby.leasedAt().IsZero() {
				t.Fatal("the standby took the lease while the active replica held it")
			}
			killedAt = time.Now()
			sig := syscall.SIGKILL
			if c.stop > 0 {
				sig = syscall.SIGSTOP
			}
			if err := active[victim].cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
		}
	}
	wall := time.Since(start)
	coll.Finish()
	if c.stop > 0 {
		// Resumed after the standby took over and the run finished, the
		// victim must stop without debiting (its lease is lost, a debit
		// of it fenced: the ledger's rows below say none landed).
		if err := active[victim].cmd.Process.Signal(syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-active[victim].done:
			t.Logf("the resumed victim exited: %v", err)
			active[victim].done <- nil
		case <-ctx.Done():
			t.Fatalf("the resumed victim did not stop:\n%s", active[victim].out)
		}
	} else {
		// The victim died by SIGKILL; the others finish.
		if err := <-active[victim].done; err == nil || !strings.Contains(err.Error(), "killed") {
			t.Fatalf("the victim exited with %v, want killed:\n%s", err, active[victim].out)
		}
		active[victim].done <- nil // for the cleanup
	}
	if c.fault != "" {
		// It killed itself at the fault point: its death is when it was
		// reaped (an upper bound, so the takeover is not overstated by it).
		killedAt = active[victim].exited
	}
	for i, p := range append(append([]*replicaProc(nil), active[:victim]...), append(active[victim+1:], standby)...) {
		select {
		case err := <-p.done:
			if err != nil {
				t.Fatalf("replica %d exited with %v:\n%s", i, err, p.out)
			}
			p.done <- nil
		case <-ctx.Done():
			t.Fatalf("replica %d did not finish:\n%s", i, p.out)
		}
	}
	takenAt := standby.leasedAt()
	if takenAt.IsZero() {
		t.Fatal("the standby never took the lease")
	}
	// The ledger: every shard's rows, and the batches the server summed.
	store, err := ledger.OpenPostgres(ctx, url, ledger.PostgresOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	released := map[[2]int64][32]byte{}
	for _, s := range got {
		if len(s.batches) != shards {
			t.Fatalf("round %d: %d batches", s.round, len(s.batches))
		}
		for i, b := range s.batches {
			if int64(len(b.Reports)) != plan.Parts[i].K {
				t.Errorf("round %d shard %d: %d reports, k_s = %d", s.round, i, len(b.Reports), plan.Parts[i].K)
			}
			key := [2]int64{int64(i), b.Round}
			if _, twice := released[key]; twice {
				t.Errorf("shard %d round %d released twice", i, b.Round)
			}
			released[key] = b.Digest()
		}
	}
	report, err := Epsilons(ctx, store, plan, delta)
	if err != nil {
		t.Fatal(err)
	}
	for i, part := range plan.Parts {
		entries, err := store.Entries(ctx, part.Run)
		if err != nil {
			t.Fatal(err)
		}
		debited := map[int64][32]byte{}
		for _, e := range entries {
			if _, twice := debited[e.Round]; twice {
				t.Errorf("shard %d round %d debited twice", i, e.Round)
			}
			debited[e.Round] = e.Digest
			want := event.Round{Randomizer: "rinf", N: part.N(), Reports: part.K, Eps0: eps0}.Event()
			if e.Event != want {
				t.Errorf("shard %d round %d debited as %v, want %v (its own n_s, k_s)", i, e.Round, e.Event, want)
			}
		}
		for key, d := range released {
			if key[0] == int64(i) && debited[key[1]] != d {
				t.Errorf("shard %d round %d was released but not debited with its digest", i, key[1])
			}
		}
		// Rows: one per released round, plus (the victim's shard) at most
		// one debited and never released, by the crash.
		extra := len(entries) - rounds
		switch {
		case i != victim && extra != 0, i == victim && (extra < 0 || extra > 1):
			t.Errorf("shard %d: %d ledger rows for %d rounds released", i, len(entries), rounds)
		case i == victim && c.fault != "" && extra != 1:
			t.Errorf("shard %d: %d ledger rows for %d rounds released; the round debited before the fault is missing", i, len(entries), rounds)
		}
		ev := event.Round{Randomizer: "rinf", N: part.N(), Reports: part.K, Eps0: eps0}.Event()
		want, err := route.Best([]event.Composed{{Event: ev, Count: int64(len(entries))}}, delta, nil)
		if err != nil {
			t.Fatal(err)
		}
		if report.Shards[i].Epsilon != want.Epsilon || report.Shards[i].Rounds != int64(len(entries)) {
			t.Errorf("shard %d: ledger epsilon %v over %d rounds, account of subsampled-shuffle n=%d k=%d over %d rounds: %v",
				i, report.Shards[i].Epsilon, report.Shards[i].Rounds, part.N(), part.K, len(entries), want.Epsilon)
		}
		t.Logf("shard %d: n_s=%d k_s=%d, %d ledger rows, epsilon %.6g", i, part.N(), part.K, len(entries), report.Shards[i].Epsilon)
	}
	whole, err := route.Epsilon([]event.Composed{{Event: event.Round{Randomizer: "rinf", N: n, Reports: k, Eps0: eps0}.Event(), Count: rounds}}, "", delta, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !(report.Epsilon > whole.Epsilon) {
		t.Errorf("the run's epsilon %v (max over shards) is not above one shuffle of all %d clients' %v: the shards' price is missing", report.Epsilon, n, whole.Epsilon)
	}
	t.Logf("run of %d rounds in %v (%s): takeover %v after the kill; run epsilon (max over shards) %.6g, shard %d; one unsharded shuffle of n=%d k=%d would report %.6g",
		rounds, wall.Round(time.Millisecond), c.name, takenAt.Sub(killedAt).Round(time.Millisecond), report.Epsilon, report.Worst, n, k, whole.Epsilon)
}
