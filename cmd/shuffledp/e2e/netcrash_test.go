package e2e

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shuffledp/shuffledp/internal/clitest"
	"github.com/shuffledp/shuffledp/internal/faultpoint"
	"github.com/shuffledp/shuffledp/ledger"
	"github.com/shuffledp/shuffledp/server"
	"github.com/shuffledp/shuffledp/shuffler"
	"github.com/shuffledp/shuffledp/statedir"
	"github.com/shuffledp/shuffledp/training"
)

// netCrashRun is the networked run of the kill loop: 60 clients, 10 a
// round, 5 epochs (30 rounds) of logistic regression on synthetic data, an
// evaluation and checkpoint every 3 rounds.
var netCrashRun = []string{"--dataset", "synthetic", "--model", "logreg", "--clients", "60", "--sample", "10",
	"--eps0", "2", "--epochs", "5", "--eval-every", "3", "--test-size", "50", "--no-progress"}

// netKill is one iteration of the kill loop: which role dies, and how.
type netKill struct {
	role  string // "server" or "shuffler"
	point string // a fault point armed in that role only; "" for a kill at a random instant of a round (roundKill)
	first int    // the first hit that may kill (1 + the hits before the run's rounds start)
}

// netKills are the named places of the loop: the shuffler inside the one
// transaction that claims a round's report ids and debits it, and right
// after its commit, and after the debit before the forward; the server
// after it recorded a received batch in its own ledger (before the step
// and the checkpoint), inside a checkpoint write, and between the
// checkpoint and its metrics line. Each is hit once a round or once an
// evaluation.
var netKills = []netKill{
	{"shuffler", ledger.PointClaimInTransaction, 1},
	{"server", ledger.PointAppendCommitted, 1},
	{"shuffler", shuffler.PointDebitedNotForwarded, 1},
	{"server", statedir.PointBeforeRename, 2}, // hit 1: the --addr-file
	{"shuffler", ledger.PointAppendCommitted, 1},
	{"server", training.PointCheckpointedNoMetrics, 1},
	{"shuffler", "", 0},
	{"server", "", 0},
}

// netProc is a role process of the loop.
type netProc struct {
	name string
	cmd  *exec.Cmd
	out  *lockedWriter
	done chan struct{}
	err  error
}

func startNetProc(t *testing.T, name string, env []string, args ...string) *netProc {
	t.Helper()
	return startNetProcKill(t, name, env, nil, args...)
}

// startNetProcKill is startNetProc with rk (if not nil) killing the process
// in a round it reaches.
func startNetProcKill(t *testing.T, name string, env []string, rk *roundKill, args ...string) *netProc {
	t.Helper()
	p := &netProc{name: name, cmd: child(env, args...), out: &lockedWriter{b: &bytes.Buffer{}}, done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if rk != nil {
		rk.prepare(t, p.cmd)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if rk != nil {
		rk.watch(p.cmd.Process)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() { p.cmd.Process.Kill(); <-p.done })
	return p
}

// stop asks p to stop (SIGINT: the server checkpoints) and kills it after
// grace.
func (p *netProc) stop(grace time.Duration) {
	select {
	case <-p.done:
		return
	default:
	}
	p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.done:
	case <-time.After(grace):
		p.cmd.Process.Kill()
		<-p.done
	}
}

type lockedWriter struct {
	mu sync.Mutex
	b  *bytes.Buffer
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *lockedWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// netView is what the loop reads back: the shuffler's ledger (checked),
// the server's receipts and the server's own ledger of received batches.
type netView struct {
	rounds   int64
	epsilon  float64
	debited  map[int64]ledger.Digest
	received []server.Receipt
	srvRecs  []ledger.Entry
}

func readNetState(t *testing.T, shufState, srvState string) netView {
	t.Helper()
	ctx := context.Background()
	v := netView{debited: map[int64]ledger.Digest{}}
	open := func(path string) (*ledger.SQLStore, string) {
		st, err := ledger.OpenSQLite(ctx, path, ledger.SQLiteOptions{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Check(ctx); err != nil {
			t.Fatalf("ledger %s integrity: %v", path, err)
		}
		runs, err := st.Runs(ctx)
		if err != nil || len(runs) > 1 {
			t.Fatalf("ledger %s runs %v, %v", path, runs, err)
		}
		if len(runs) == 0 {
			return st, ""
		}
		return st, runs[0]
	}
	st, run := open(filepath.Join(shufState, ledger.FileName))
	defer st.Close()
	if run != "" {
		sum, err := ledger.Summarize(ctx, st, run, 1e-5, true)
		if err != nil {
			t.Fatal(err)
		}
		v.rounds, v.epsilon = sum.Rounds, sum.Epsilon
		es, err := st.Entries(ctx, run)
		if err != nil {
			t.Fatal(err)
		}
		digests := map[ledger.Digest]int64{}
		for _, e := range es {
			if _, dup := v.debited[e.Round]; dup {
				t.Fatalf("round %d debited twice", e.Round)
			}
			if r, dup := digests[e.Digest]; dup {
				t.Fatalf("one batch debited as rounds %d and %d", r, e.Round)
			}
			v.debited[e.Round], digests[e.Digest] = e.Digest, e.Round
		}
		if int64(len(es)) != v.rounds {
			t.Fatalf("%d entries, summary %d rounds", len(es), v.rounds)
		}
	}
	var err error
	if v.received, err = server.ReadFileReceipts(filepath.Join(srvState, statedir.ReceiptsFile)); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(srvState, ledger.FileName)); err == nil {
		sst, srun := open(filepath.Join(srvState, ledger.FileName))
		defer sst.Close()
		if srun != "" {
			if v.srvRecs, err = sst.Entries(ctx, srun); err != nil {
				t.Fatal(err)
			}
		}
	}
	return v
}

// checkNetInvariants: no batch reached the server (receipt) or its own
// record without the shuffler's debit of that round with that digest, and
// epsilon never decreased.
func checkNetInvariants(t *testing.T, what string, v netView, prevEps float64) {
	t.Helper()
	for _, r := range v.received {
		if d, ok := v.debited[r.Round]; !ok || d != ledger.Digest(r.Digest) {
			t.Fatalf("%s: the server received round %d (digest %x), which the shuffler's ledger does not hold with that digest", what, r.Round, r.Digest[:6])
		}
	}
	for _, e := range v.srvRecs {
		if d, ok := v.debited[e.Round]; !ok || d != e.Digest {
			t.Fatalf("%s: the server recorded round %d, not debited with that digest by the shuffler", what, e.Round)
		}
	}
	if v.epsilon < prevEps {
		t.Fatalf("%s: epsilon decreased from %v to %v", what, prevEps, v.epsilon)
	}
}

// TestNetworkedKillLoop runs the three roles as separate processes (the
// commands server, shuffler and client, by hand) and kills the shuffler or
// the server with SIGKILL, at the named fault points of netKills (armed in
// that process only) and at random instants of rounds (roundKill); after each kill the other
// roles are stopped and the state is checked: the shuffler's ledger passes
// its integrity check and debits no round and no batch twice, and every
// batch the server received (its receipt log and its own ledger) is a
// round the shuffler debited, with the same digest. Then the run is
// completed, and `ledger show` reports account's epsilon for the rounds
// the ledger holds: the 30 planned, never more (some debited and lost to
// a kill: charged, never released; the shuffler then stops the run short
// of them).
func TestNetworkedKillLoop(t *testing.T) {
	dir := t.TempDir()
	pkiDir, shufState, srvState := filepath.Join(dir, "pki"), filepath.Join(dir, "shuffler"), filepath.Join(dir, "server")
	creds := filepath.Join(dir, "creds.json")
	if out, err := runCmd(t, "pki", "init", "--dir", pkiDir); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if out, err := runCmd(t, "pki", "enrol", "--dir", pkiDir, "--clients", "0:60", "--out", creds); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	iter := 0
	// start runs the three roles; env arms a fault point in role only, or
	// rk kills role in a round.
	start := func(role string, env []string, rk *roundKill) (srv, sh, cl *netProc) {
		iter++
		envOf := func(r string) []string {
			if r == role {
				return env
			}
			return nil
		}
		rkOf := func(r string) *roundKill {
			if r == role {
				return rk
			}
			return nil
		}
		srvAddr, shAddr := filepath.Join(dir, fmt.Sprintf("srv%d.addr", iter)), filepath.Join(dir, fmt.Sprintf("sh%d.addr", iter))
		srv = startNetProcKill(t, "server", envOf("server"), rkOf("server"), append([]string{"server", "--listen", "127.0.0.1:0", "--addr-file", srvAddr,
			"--state", srvState, "--pki", filepath.Join(pkiDir, "server")}, netCrashRun...)...)
		sa := waitNetAddr(t, srvAddr, srv)
		if sa == "" {
			return srv, nil, nil
		}
		sh = startNetProcKill(t, "shuffler", envOf("shuffler"), rkOf("shuffler"), "shuffler", "--listen", "127.0.0.1:0", "--addr-file", shAddr,
			"--server", sa, "--state", shufState, "--pki", filepath.Join(pkiDir, "shuffler"), "--release-when-complete")
		ha := waitNetAddr(t, shAddr, sh)
		if ha == "" {
			return srv, sh, nil
		}
		cl = startNetProc(t, "client", nil, "client", "--shuffler", ha, "--server", sa, "--clients", "0:60", "--workers", "2",
			"--pki", filepath.Join(pkiDir, "client"), "--credentials", creds)
		return srv, sh, cl
	}
	rng := rand.New(rand.NewPCG(14, 7))
	loops := len(netKills)
	if testing.Short() {
		loops = 4
	}
	prevEps, kills, ran := 0.0, 0, 0
	for i := range loops {
		k := netKills[i]
		var env []string
		var rk *roundKill
		if k.point != "" {
			env = []string{fmt.Sprintf("%s=%s@%d", faultpoint.EnvVar, k.point, k.first+rng.IntN(3))}
		} else {
			rk = newRoundKill(t, rng)
		}
		srv, sh, cl := start(k.role, env, rk)
		if finishedAtStart(srv) {
			// The previous iteration's run reached its last round: the
			// server says so and exits 0 without listening; nothing is
			// left to kill.
			t.Logf("iteration %d: the run finished in an earlier iteration", i)
			break
		}
		ran++
		victim := map[string]*netProc{"server": srv, "shuffler": sh}[k.role]
		if victim == nil {
			t.Fatalf("iteration %d: %s did not start\n%s", i, k.role, srv.out)
		}
		select {
		case <-victim.done:
		case <-srv.done: // the run finished before the kill
		case <-time.After(2 * time.Minute):
			t.Fatalf("iteration %d (%s %s): no kill within 2 minutes\nserver:\n%s\nshuffler:\n%s", i, k.role, k.point, srv.out, sh.out)
		}
		killed := killedBySIGKILL(victim.err)
		if killed {
			kills++
		}
		for _, p := range []*netProc{cl, sh, srv} {
			if p != nil {
				p.stop(15 * time.Second)
			}
		}
		v := readNetState(t, shufState, srvState)
		what := fmt.Sprintf("iteration %d (kill %s at %q, killed %v)", i, k.role, k.point, killed)
		if rk != nil {
			what = fmt.Sprintf("iteration %d (kill %s: %v; killed %v, by the parent %v)", i, k.role, rk, killed, rk.sent.Load())
		}
		checkNetInvariants(t, what, v, prevEps)
		prevEps = v.epsilon
		t.Logf("%s: ledger %d rounds, %d receipts, epsilon %.4f", what, v.rounds, len(v.received), v.epsilon)
		if reason, _, _ := serverStopped(srv.out.String()); reason == "rounds-debited" {
			// The shuffler debited every planned round (some lost to
			// kills) and stopped the run: nothing is left to kill.
			t.Logf("iteration %d: the shuffler debited the planned rounds and stopped the run", i)
			break
		}
	}
	if kills < 4 || kills < ran-2 {
		t.Fatalf("only %d of %d processes were killed: the loop is not testing crashes", kills, ran)
	}
	// The final run completes (or, when the loop already finished the
	// run, the server says so at start and exits 0 without listening).
	srv, sh, cl := start("", nil, nil)
	select {
	case <-srv.done:
	case <-time.After(3 * time.Minute):
		t.Fatal("the final run did not finish within 3 minutes")
	}
	applied, ended := runEnded(srv.out.String(), 30)
	if finishedAtStart(srv) {
		applied, ended = 30, true
	}
	if srv.err != nil || !ended {
		t.Fatalf("final server: %v\n%s", srv.err, srv.out)
	}
	// A run the last iteration left finished (the server resumes at round
	// 30) ends at once: the server exits before the shuffler's first
	// GetModel and before the client registers, and both wait for a peer
	// that is gone, by design (they dial with wait-for-ready); they are
	// stopped. So does a run whose planned rounds the shuffler had all
	// debited: the shuffler stops it at once and exits 0, and the client
	// may not have registered yet (it then waits for the shuffler, which is
	// gone). Otherwise both must finish on their own.
	resumedDone := strings.Contains(srv.out.String(), "resuming at 30)")
	for _, p := range []*netProc{sh, cl} {
		if p == nil { // not started: the server had nothing to do
			continue
		}
		wait := 30 * time.Second
		if resumedDone || (p == cl && applied < 30 && !strings.Contains(cl.out.String(), "registered with the shuffler")) {
			wait = 3 * time.Second
		}
		select {
		case <-p.done:
			if p.err != nil {
				t.Fatalf("final %s: %v\n%s", p.name, p.err, p.out)
			}
		case <-time.After(wait):
			if wait == 30*time.Second {
				t.Fatalf("final %s did not finish\n%s", p.name, p.out)
			}
			p.stop(5 * time.Second)
		}
	}
	v := readNetState(t, shufState, srvState)
	checkNetInvariants(t, "final", v, prevEps)
	if out, err := runCmd(t, "ledger", "check", "--state", shufState); err != nil {
		t.Fatalf("ledger check: %v\n%s", err, out)
	}
	// The ledger holds the 30 planned rounds, never more (those lost to a
	// kill included: the shuffler then stops the run short of them).
	rounds, eps, _ := clitest.LedgerShow(t, shufState)
	if rounds != v.rounds || rounds != 30 {
		t.Fatalf("ledger show: %d rounds; read %d; want the 30 planned", rounds, v.rounds)
	}
	if want := upAccountEpsilon(t, strconvI(rounds)); eps != want {
		t.Fatalf("ledger show epsilon %v over %d rounds, account %v", eps, rounds, want)
	}
	last, _ := lastMetrics(t, filepath.Join(srvState, statedir.MetricsFile))
	if last["round"] != float64(applied) {
		t.Fatalf("server metrics end at %v, want round %d", last["round"], applied)
	}
	t.Logf("%d kills; final ledger %d rounds (%d applied), %d receipts, epsilon %.4f", kills, rounds, applied, len(v.received), eps)
}

// waitNetAddr waits for a role's --addr-file; "" if the process exited
// first (killed by its fault point while starting).
// finishedAtStart reports whether p is a server that found its run already
// finished and exited 0 without listening.
func finishedAtStart(p *netProc) bool {
	select {
	case <-p.done:
	default:
		return false
	}
	return p.err == nil && strings.Contains(p.out.String(), "already finished")
}

func waitNetAddr(t *testing.T, path string, p *netProc) string {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); {
		if b, err := os.ReadFile(path); err == nil && bytes.HasSuffix(b, []byte("\n")) {
			return strings.TrimSpace(string(b))
		}
		select {
		case <-p.done:
			if killedBySIGKILL(p.err) || finishedAtStart(p) {
				return ""
			}
			t.Fatalf("%s exited before listening: %v\n%s", p.name, p.err, p.out)
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatalf("%s did not listen within 2 minutes", p.name)
	return ""
}
