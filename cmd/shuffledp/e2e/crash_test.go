package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/internal/faultpoint"
	"github.com/shuffledp/shuffledp/ledger"
	"github.com/shuffledp/shuffledp/server"
	"github.com/shuffledp/shuffledp/shuffler"
	"github.com/shuffledp/shuffledp/statedir"
	"github.com/shuffledp/shuffledp/training"
)

// crashArgs is a run of 200 rounds (20 epochs of 10), each fast enough that
// a kill lands anywhere in the round (sampling, clients, the ledger's
// SQLite transaction, the release, the checkpoint, the metrics), and long
// enough that the kill loop does not finish it.
func crashArgs(state string, extra ...string) []string {
	args := []string{"train", "--dataset", "synthetic", "--model", "logreg", "--clients", "200", "--sample", "20",
		"--randomizer", "rinf", "--clip", "0.1", "--eps0", "2", "--lr", "0.5", "--no-progress", "--test-size", "50",
		"--epochs", "20", "--eval-every", "2", "--state", state}
	return append(args, extra...)
}

// crashPoints are the named places a child is killed at (internal/faultpoint).
var crashPoints = []string{
	ledger.PointAppendInTransaction,     // inside the ledger's write
	ledger.PointAppendCommitted,         // debited, before Debit returns
	shuffler.PointDebitedNotForwarded,   // between the debit and the release
	statedir.PointBeforeRename,          // inside the checkpoint write
	training.PointCheckpointedNoMetrics, // checkpoint durable, metrics line not written
}

// stateView is what a crash test reads back from a state directory.
type stateView struct {
	rounds   int64
	epsilon  float64
	debited  map[[32]byte]bool
	received []server.Receipt
}

func readState(t *testing.T, state string) stateView {
	t.Helper()
	ctx := context.Background()
	store, err := ledger.OpenSQLite(ctx, filepath.Join(state, ledger.FileName), ledger.SQLiteOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if err := store.Check(ctx); err != nil {
		t.Fatalf("ledger integrity: %v", err)
	}
	runs, err := store.Runs(ctx)
	if err != nil || len(runs) != 1 {
		t.Fatalf("ledger runs %v, %v; want one", runs, err)
	}
	sum, err := ledger.Summarize(ctx, store, runs[0], 1e-5, true)
	if err != nil {
		t.Fatal(err)
	}
	v := stateView{rounds: sum.Rounds, epsilon: sum.Epsilon, debited: map[[32]byte]bool{}}
	entries, err := store.Entries(ctx, runs[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if v.debited[e.Digest] {
			t.Fatalf("batch %x debited twice", e.Digest[:6])
		}
		v.debited[e.Digest] = true
	}
	if v.received, err = server.ReadFileReceipts(filepath.Join(state, statedir.ReceiptsFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return v
}

// checkInvariants: every batch the server ever received was debited
// (so the ledger's round count is at least the number of distinct batches
// received), and epsilon never decreased.
func checkInvariants(t *testing.T, what string, v stateView, prevEps float64) {
	t.Helper()
	distinct := map[[32]byte]bool{}
	for _, r := range v.received {
		if !v.debited[r.Digest] {
			t.Fatalf("%s: the server received round %d's batch, which the ledger does not hold", what, r.Round)
		}
		distinct[r.Digest] = true
	}
	if int64(len(distinct)) > v.rounds {
		t.Fatalf("%s: %d distinct batches received, %d rounds debited", what, len(distinct), v.rounds)
	}
	if v.epsilon < prevEps {
		t.Fatalf("%s: epsilon decreased from %v to %v", what, prevEps, v.epsilon)
	}
}

func killedBySIGKILL(err error) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

// TestCrashLoop kills the trainer with SIGKILL many times, at the named
// points and at random instants, reruns it with the same --state after
// every kill, and checks after each restart that the ledger passes its
// integrity check, holds every batch the server ever received, never
// debited one batch twice, and that epsilon never decreased; finally the
// run completes, with one ledger round per distinct batch released (seeded;
// with crypto noise a batch debited and lost to a kill stays charged), the
// epsilon `account` gives for them, and a metrics file with one line
// per evaluated round, in order.
func TestCrashLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("crash loop runs child processes")
	}
	for _, crypto := range []bool{false, true} {
		t.Run(fmt.Sprintf("crypto=%v", crypto), func(t *testing.T) {
			state := filepath.Join(t.TempDir(), "run")
			var extra []string
			if crypto {
				extra = []string{"--crypto-noise"}
			}
			rng := rand.New(rand.NewPCG(42, map[bool]uint64{false: 1, true: 2}[crypto]))
			prevEps, kills, instant := 0.0, 0, 0
			for i := 0; i < 24; i++ {
				var env []string
				named := i%2 == 0
				if named {
					p := crashPoints[(i/2)%len(crashPoints)]
					env = append(env, fmt.Sprintf("%s=%s@%d", faultpoint.EnvVar, p, 1+rng.IntN(4)))
				}
				cmd := child(env, crashArgs(state, extra...)...)
				var out strings.Builder
				cmd.Stdout, cmd.Stderr = &out, &out
				var rk *roundKill
				if !named {
					rk = newRoundKill(t, rng)
					rk.prepare(t, cmd)
					env = append(env, rk.String())
				}
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				if rk != nil {
					rk.watch(cmd.Process)
				}
				err := cmd.Wait()
				switch {
				case killedBySIGKILL(err):
					kills++
					if rk != nil && rk.sent.Load() {
						instant++
					}
				case err == nil:
					// finished before the kill: fine, the next runs resume a finished run
				default:
					t.Fatalf("iteration %d (%v): %v\n%s", i, env, err, out.String())
				}
				v := readState(t, state)
				checkInvariants(t, fmt.Sprintf("after iteration %d (%v)", i, env), v, prevEps)
				prevEps = v.epsilon
			}
			if kills < 12 {
				t.Fatalf("only %d of 24 children were killed (the run finished early); the test is not testing crashes", kills)
			}
			// The final run completes.
			cmd := child(nil, crashArgs(state, extra...)...)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("final run: %v\n%s", err, out)
			}
			v := readState(t, state)
			checkInvariants(t, "final", v, prevEps)
			distinct := map[[32]byte]bool{}
			for _, r := range v.received {
				distinct[r.Digest] = true
			}
			// Seeded: every debited batch is eventually released (a batch
			// debited before a kill is recomputed and released by the
			// replay). With crypto noise a batch debited and then lost to a
			// kill stays spent: debits may exceed releases, never the reverse.
			if !crypto && int64(len(distinct)) != v.rounds {
				t.Fatalf("final: %d distinct batches released, %d debited", len(distinct), v.rounds)
			}
			if !crypto && v.rounds != 200 {
				t.Fatalf("seeded run: ledger holds %d rounds, want 200 (every replayed batch recognised)", v.rounds)
			}
			if crypto && v.rounds < 200 {
				t.Fatalf("crypto-noise run: ledger holds %d rounds, fewer than the 200 the model took", v.rounds)
			}
			g, err := ledger.StatementOf([]event.Composed{{Event: event.Event{Mechanism: event.SubsampledShuffle, N: 200, K: 20, Eps0: 2}, Count: v.rounds}}, "best", 1e-5, nil)
			if err != nil || g.Epsilon != v.epsilon {
				t.Fatalf("final epsilon %v, account gives %v (%v) for %d rounds", v.epsilon, g.Epsilon, err, v.rounds)
			}
			last := -1.0
			f, err := os.Open(filepath.Join(state, statedir.MetricsFile))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				var r struct {
					Round float64 `json:"round"`
				}
				if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
					t.Fatalf("metrics line %q: %v", sc.Text(), err)
				}
				if r.Round <= last {
					t.Fatalf("metrics: round %v after %v (duplicate or out of order)", r.Round, last)
				}
				last = r.Round
			}
			if last != 200 {
				t.Fatalf("metrics end at round %v, want 200", last)
			}
			ents, _ := os.ReadDir(state)
			for _, e := range ents {
				if strings.Contains(e.Name(), ".tmp") {
					t.Fatalf("temporary %s left in the state directory", e.Name())
				}
			}
			t.Logf("%d kills (%d of the 12 random ones by the parent inside a round, the rest by the cap); ledger %d rounds, %d receipts, epsilon %.4f", kills, instant, v.rounds, len(v.received), v.epsilon)
		})
	}
}

// TestInterruptExits130: SIGINT stops the run after the round in progress,
// saves the state, exits 130; the same command resumes from it.
func TestInterruptExits130(t *testing.T) {
	state := filepath.Join(t.TempDir(), "run")
	args := crashArgs(state, "--epochs", "1000")
	cmd := child(nil, args...)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until a few evaluations are written.
	deadline := time.Now().Add(2 * time.Minute) // a failure deadline: generous for a busy machine
	for {
		b, _ := os.ReadFile(filepath.Join(state, statedir.MetricsFile))
		if strings.Count(string(b), "\n") >= 3 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no progress\n%s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit after SIGINT: %v, want status 130\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "state saved") {
		t.Errorf("output does not say the state was saved:\n%s", out.String())
	}
	v := readState(t, state)
	checkInvariants(t, "after SIGINT", v, 0)
	resume := child(nil, crashArgs(state, "--epochs", "1000", "--target-epsilon", fmt.Sprint(v.epsilon*1.05))...)
	b, err := resume.CombinedOutput()
	if err != nil || !strings.Contains(string(b), "resuming run") || !strings.Contains(string(b), "stopped (target-epsilon)") {
		t.Fatalf("resume after SIGINT: %v\n%s", err, b)
	}
}
