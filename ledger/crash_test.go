package ledger

import (
	"bufio"
	"context"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shuffledp/shuffledp/internal/faultpoint"
)

// crashEnv names the ledger a helper process debits into: an SQLite file
// or a postgres:// URL (OpenStore's target).
const crashEnv = "SHUFFLEDP_LEDGER_CRASH_DB"

// crashModeEnv set to "claim" makes the helper process claim report IDs
// (claimForever) instead of debiting.
const crashModeEnv = "SHUFFLEDP_LEDGER_CRASH_MODE"

// TestHelperProcess is not a test: run by TestKillDuringDebits with
// crashEnv set, it opens the ledger, debits one round after the last
// committed one, again and again, and prints "ok ROUND" on stdout after
// each Debit returns, until it is killed.
func TestHelperProcess(t *testing.T) {
	target := os.Getenv(crashEnv)
	if target == "" {
		t.Skip("helper process for TestKillDuringDebits")
	}
	ctx := context.Background()
	s, err := OpenStore(ctx, target, StoreOptions{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if os.Getenv(crashModeEnv) == "claim" {
		claimForever(ctx, s)
	}
	l, err := Open(ctx, s, "crash", Options{Delta: delta})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	out := bufio.NewWriter(os.Stdout)
	for r := l.LastRound() + 1; ; r++ {
		var err error
		if os.Getenv(crashModeEnv) == "claim-debit" {
			_, err = l.DebitClaiming(ctx, r, subsampled, 1000, digest(r), claimIDs(r))
		} else {
			err = l.Debit(ctx, r, subsampled, 1000, digest(r))
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		fmt.Fprintf(out, "ok %d\n", r)
		out.Flush()
	}
}

// A process killed with SIGKILL at random points, inside and between
// ledger writes, loses no debit that returned, duplicates none, and
// leaves a database that passes the integrity check; epsilon never
// decreases from one restart to the next.
func testKillDuringDebits(t *testing.T, path string) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2)) // test schedule only
	acked := int64(-1)                 // highest round a helper reported committed
	prevEps := 0.0
	kills := 12
	if IsPostgresURL(path) {
		kills = 6 // each costs a process and its connections; the server rolls a killed client back
	}
	for i := range kills {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashEnv+"="+path)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Let it commit a few rounds, then kill it at a random moment
		// (often inside a transaction: a debit takes about a millisecond).
		wantLines := rng.IntN(15)
		lines := bufio.NewScanner(stdout)
		for n := 0; n < wantLines && lines.Scan(); n++ {
			r, err := strconv.ParseInt(strings.TrimPrefix(lines.Text(), "ok "), 10, 64)
			if err != nil {
				t.Fatalf("helper said %q", lines.Text())
			}
			acked = max(acked, r)
		}
		time.Sleep(time.Duration(rng.IntN(3000)) * time.Microsecond)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		// Every line written before the kill was after a committed debit.
		for lines.Scan() {
			if r, err := strconv.ParseInt(strings.TrimPrefix(lines.Text(), "ok "), 10, 64); err == nil {
				acked = max(acked, r)
			}
		}
		err = cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Fatalf("kill %d: helper ended with %v, not SIGKILL; stderr:\n%s", i, err, stderr.String())
		}

		s, err := OpenStore(ctx, path, StoreOptions{})
		if err != nil {
			t.Fatalf("kill %d: reopening: %v", i, err)
		}
		if err := s.Check(ctx); err != nil {
			t.Fatalf("kill %d: %v", i, err)
		}
		entries, err := s.Entries(ctx, "crash")
		if err != nil {
			t.Fatal(err)
		}
		for j, e := range entries { // rounds 0, 1, ..., each once
			if e.Round != int64(j) || e.Digest != digest(e.Round) {
				t.Fatalf("kill %d: entry %d is round %d (digest %s)", i, j, e.Round, e.Digest)
			}
		}
		if int64(len(entries)) < acked+1 {
			t.Fatalf("kill %d: %d entries, but round %d was reported committed", i, len(entries), acked)
		}
		l, err := Open(ctx, s, "crash", Options{Delta: delta})
		if err != nil {
			t.Fatal(err)
		}
		g, err := l.Epsilon()
		if err != nil {
			t.Fatal(err)
		}
		if g.Epsilon < prevEps {
			t.Fatalf("kill %d: epsilon %v < %v before", i, g.Epsilon, prevEps)
		}
		prevEps = g.Epsilon
		t.Logf("kill %d: %d entries (%d acknowledged), epsilon %.6g", i, len(entries), acked+1, g.Epsilon)
		s.Close()
	}
}

// A kill at the fault points inside Append: in the transaction, the round
// is not in the ledger (its Debit never returned, its batch was never
// released); just after the commit, it is, although Debit never returned.
// Either way every earlier round is there once and the check passes.
func testKillAtFaultPoints(t *testing.T, path string) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 4)) // test schedule only
	total := int64(0)
	for i := range 6 {
		point := PointAppendInTransaction
		if i%2 == 1 {
			point = PointAppendCommitted
		}
		hit := int64(1 + rng.IntN(8))
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashEnv+"="+path, fmt.Sprintf("%s=%s@%d", faultpoint.EnvVar, point, hit))
		out, err := cmd.Output()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Fatalf("%s@%d: helper ended with %v, not SIGKILL", point, hit, err)
		}
		acked := int64(strings.Count(string(out), "ok "))
		want := total + hit - 1 // the hit-th debit of this process was in flight
		if point == PointAppendCommitted {
			want++ // ... and committed
		}
		if acked != hit-1 {
			t.Fatalf("%s@%d: helper acknowledged %d debits, want %d", point, hit, acked, hit-1)
		}
		// `ledger show` reads the killed process's file read-only first.
		ro, err := OpenStore(ctx, path, StoreOptions{ReadOnly: true})
		if err != nil {
			t.Fatalf("%s@%d: read-only: %v", point, hit, err)
		}
		sum, err := Summarize(ctx, ro, "crash", 0, false)
		if err != nil || sum.Rounds != want {
			t.Fatalf("%s@%d: read-only summary: %d rounds, %v; want %d", point, hit, sum.Rounds, err, want)
		}
		ro.Close()
		s, err := OpenStore(ctx, path, StoreOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Check(ctx); err != nil {
			t.Fatalf("%s@%d: %v", point, hit, err)
		}
		entries, err := s.Entries(ctx, "crash")
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(entries)) != want {
			t.Fatalf("%s@%d: %d entries, want %d", point, hit, len(entries), want)
		}
		for j, e := range entries {
			if e.Round != int64(j) {
				t.Fatalf("%s@%d: entry %d is round %d", point, hit, j, e.Round)
			}
		}
		s.Close()
		total = want
	}
}

// Two processes debiting the same run of one file at once (each the same
// batch per round, as a retrying shuffler would) write every round once
// and leave a database that passes the check, even when both are killed.
func testTwoProcesses(t *testing.T, path string) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	ctx := context.Background()
	var cmds [2]*exec.Cmd
	var outs [2]*bufio.Scanner
	var errs [2]strings.Builder
	for i := range cmds {
		cmds[i] = exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
		cmds[i].Env = append(os.Environ(), crashEnv+"="+path)
		cmds[i].Stderr = &errs[i]
		stdout, err := cmds[i].StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		outs[i] = bufio.NewScanner(stdout)
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	acked := int64(-1)
	for i := range cmds {
		for n := 0; n < 40 && outs[i].Scan(); n++ {
			if r, err := strconv.ParseInt(strings.TrimPrefix(outs[i].Text(), "ok "), 10, 64); err == nil {
				acked = max(acked, r)
			}
		}
	}
	for i := range cmds {
		cmds[i].Process.Signal(syscall.SIGKILL)
		for outs[i].Scan() {
			if r, err := strconv.ParseInt(strings.TrimPrefix(outs[i].Text(), "ok "), 10, 64); err == nil {
				acked = max(acked, r)
			}
		}
		err := cmds[i].Wait()
		if ws, ok := cmds[i].ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
			t.Errorf("helper %d ended with %v before the kill; stderr:\n%s", i, err, errs[i].String())
		}
	}
	s, err := OpenStore(ctx, path, StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Check(ctx); err != nil {
		t.Fatal(err)
	}
	entries, err := s.Entries(ctx, "crash")
	if err != nil {
		t.Fatal(err)
	}
	for j, e := range entries {
		if e.Round != int64(j) {
			t.Fatalf("entry %d is round %d", j, e.Round)
		}
	}
	if int64(len(entries)) < acked+1 {
		t.Fatalf("%d entries, but round %d was reported committed", len(entries), acked)
	}
	t.Logf("%d entries, %d acknowledged", len(entries), acked+1)
}

// The crash tests run on every backend that processes share: an SQLite
// file, and a PostgreSQL database whose server outlives the killed
// clients (their open transactions are rolled back when their connections
// drop).
func TestKillDuringDebits(t *testing.T)  { forShared(t, testKillDuringDebits) }
func TestKillAtFaultPoints(t *testing.T) { forShared(t, testKillAtFaultPoints) }
func TestTwoProcesses(t *testing.T)      { forShared(t, testTwoProcesses) }

func forShared(t *testing.T, test func(t *testing.T, target string)) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	for _, b := range sharedBackends {
		t.Run(b.name, func(t *testing.T) { test(t, b.target(t)) })
	}
}

// claimIDs are the report IDs of round r in the claim crash test.
func claimIDs(r int64) [][16]byte {
	out := make([][16]byte, 1000)
	for i := range out {
		h := sha256.Sum256([]byte(fmt.Sprintf("round %d report %d", r, i)))
		out[i] = [16]byte(h[:16])
	}
	return out
}

// claimForever claims the ids of rounds 0, 1, 2, ... (the ones claimed
// by an earlier process again: a restarted shuffler re-collecting), and
// prints "ok ROUND" after each claim returns, until it is killed. A
// replay (a re-claim is never one) ends it with status 4.
func claimForever(ctx context.Context, s Backend) {
	out := bufio.NewWriter(os.Stdout)
	for r := int64(0); ; r++ {
		replays, err := s.ClaimReportIDs(ctx, "crash", r, claimIDs(r))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		if replays != nil {
			fmt.Fprintf(os.Stderr, "round %d: %d replays\n", r, len(replays))
			os.Exit(4)
		}
		fmt.Fprintf(out, "ok %d\n", r)
		out.Flush()
	}
}

// reportIDCounts returns the number of report IDs of run recorded under
// each round, read with SQL.
func reportIDCounts(t *testing.T, target, run string) map[int64]int {
	t.Helper()
	ctx := context.Background()
	s, err := OpenStore(ctx, target, StoreOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const q = `SELECT round, length(ids) / 16 FROM report_id_rounds WHERE run = $1`
	counts := map[int64]int{}
	rows, err := s.(*SQLStore).db.QueryContext(ctx, q, run)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var r int64
		var n int
		if err := rows.Scan(&r, &n); err != nil {
			t.Fatal(err)
		}
		counts[r] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return counts
}

// A shuffler killed inside a claim records all of the round's report IDs
// or none, and one restarted re-claims the rounds it had claimed without
// a replay.
func TestKillDuringClaim(t *testing.T) { forShared(t, testKillDuringClaim) }

func testKillDuringClaim(t *testing.T, target string) {
	claimed := int64(0) // rounds 0 .. claimed-1 are claimed
	for _, step := range []struct {
		point string
		hit   int64
		// after: rounds claimed after the kill.
		after int64
	}{
		{PointClaimInTransaction, 3, 2}, // new rounds 0, 1; killed inside round 2's claim
		{PointClaimCommitted, 5, 5},     // re-claims 0, 1; new 2, 3, 4; killed after round 4 committed
		{PointClaimInTransaction, 2, 6}, // re-claims 0..4; new 5; killed inside round 6's claim
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashEnv+"="+target, crashModeEnv+"=claim",
			fmt.Sprintf("%s=%s@%d", faultpoint.EnvVar, step.point, step.hit))
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Fatalf("%s@%d: helper ended with %v, not SIGKILL; stderr:\n%s", step.point, step.hit, err, stderr.String())
		}
		acked := int64(strings.Count(string(out), "ok "))
		wantAcked := step.after
		if step.point == PointClaimCommitted {
			wantAcked-- // the last committed claim never returned
		}
		if acked != wantAcked {
			t.Fatalf("%s@%d: helper acknowledged %d claims, want %d", step.point, step.hit, acked, wantAcked)
		}
		counts := reportIDCounts(t, target, "crash")
		for r := range max(step.after, claimed) + 2 {
			want := 0
			if r < step.after {
				want = 1000
			}
			if counts[r] != want {
				t.Fatalf("%s@%d: round %d has %d report IDs, want %d (all or none)", step.point, step.hit, r, counts[r], want)
			}
		}
		if len(counts) != int(step.after) {
			t.Fatalf("%s@%d: report IDs under %d rounds, want %d", step.point, step.hit, len(counts), step.after)
		}
		claimed = step.after
	}
}

// A shuffler killed inside or just after the one write of a round's
// report IDs and its debit (Ledger.DebitClaiming) leaves both or neither,
// and the pruning of the earlier rounds' IDs with them: the last debited
// round has all its report IDs, no other round has any (a kill inside the
// transaction after the prune, PointPruneInTransaction, leaves the
// previous round's IDs in place).
func TestKillDuringClaimDebit(t *testing.T) { forShared(t, testKillDuringClaimDebit) }

func testKillDuringClaimDebit(t *testing.T, target string) {
	total := int64(0) // rounds 0 .. total-1 are debited
	for _, step := range []struct {
		point string
		hit   int64
	}{
		{PointClaimInTransaction, 3}, {PointAppendInTransaction, 2}, {PointPruneInTransaction, 3},
		{PointAppendCommitted, 2}, {PointClaimInTransaction, 1}, {PointPruneInTransaction, 1},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashEnv+"="+target, crashModeEnv+"=claim-debit",
			fmt.Sprintf("%s=%s@%d", faultpoint.EnvVar, step.point, step.hit))
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Fatalf("%s@%d: helper ended with %v, not SIGKILL; stderr:\n%s", step.point, step.hit, err, stderr.String())
		}
		if acked := int64(strings.Count(string(out), "ok ")); acked != step.hit-1 {
			t.Fatalf("%s@%d: helper acknowledged %d debits, want %d", step.point, step.hit, acked, step.hit-1)
		}
		want := total + step.hit - 1
		if step.point == PointAppendCommitted {
			want++ // the round in flight committed, its caller never learnt it
		}
		s := openTarget(t, target)
		entries, err := s.Entries(context.Background(), "crash")
		if err != nil || int64(len(entries)) != want {
			t.Fatalf("%s@%d: %d entries, %v; want %d", step.point, step.hit, len(entries), err, want)
		}
		if err := s.Check(context.Background()); err != nil {
			t.Fatalf("%s@%d: %v", step.point, step.hit, err)
		}
		s.Close()
		counts := reportIDCounts(t, target, "crash")
		for r := range want + 2 {
			n := 0
			if r == want-1 {
				n = 1000 // the last debited round's; earlier rounds' pruned with its debit
			}
			if counts[r] != n {
				t.Fatalf("%s@%d: round %d has %d report IDs, want %d (the last debited round's, no other)", step.point, step.hit, r, counts[r], n)
			}
		}
		if len(counts) != 1 {
			t.Fatalf("%s@%d: report IDs under %d rounds, want 1", step.point, step.hit, len(counts))
		}
		total = want
	}
}
