package ledger

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shuffledp/shuffledp/internal/faultpoint"
)

// crashEnv names the ledger file a helper process debits into.
const crashEnv = "SHUFFLEDP_LEDGER_CRASH_DB"

// TestHelperProcess is not a test: run by TestKillDuringDebits with
// crashEnv set, it opens the ledger, debits one round after the last
// committed one, again and again, and prints "ok ROUND" on stdout after
// each Debit returns, until it is killed.
func TestHelperProcess(t *testing.T) {
	path := os.Getenv(crashEnv)
	if path == "" {
		t.Skip("helper process for TestKillDuringDebits")
	}
	ctx := context.Background()
	s, err := OpenSQLite(ctx, path, SQLiteOptions{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	l, err := Open(ctx, s, "crash", Options{Delta: delta})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	out := bufio.NewWriter(os.Stdout)
	for r := l.LastRound() + 1; ; r++ {
		if err := l.Debit(ctx, r, subsampled, 1000, digest(r)); err != nil {
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
func TestKillDuringDebits(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), FileName)
	rng := rand.New(rand.NewPCG(1, 2)) // test schedule only
	acked := int64(-1)                 // highest round a helper reported committed
	prevEps := 0.0
	kills := 12
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

		s, err := OpenSQLite(ctx, path, SQLiteOptions{})
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
func TestKillAtFaultPoints(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), FileName)
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
		ro, err := OpenSQLite(ctx, path, SQLiteOptions{ReadOnly: true})
		if err != nil {
			t.Fatalf("%s@%d: read-only: %v", point, hit, err)
		}
		sum, err := Summarize(ctx, ro, "crash", 0, false)
		if err != nil || sum.Rounds != want {
			t.Fatalf("%s@%d: read-only summary: %d rounds, %v; want %d", point, hit, sum.Rounds, err, want)
		}
		ro.Close()
		s, err := OpenSQLite(ctx, path, SQLiteOptions{})
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
func TestTwoProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), FileName)
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
	s, err := OpenSQLite(ctx, path, SQLiteOptions{})
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
