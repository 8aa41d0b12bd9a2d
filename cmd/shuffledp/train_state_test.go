package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/shuffledp/shuffledp/statedir"
)

// TestTrainStateRefusals: the state-file defects found in review, each
// reproduced as a new user would.
func TestTrainStateRefusals(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "run")
	base := append(append([]string{}, small...), "--epochs", "1", "--state", state)
	if out, err := runTrainCmd(t, base...); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	metricsBefore, _ := os.ReadFile(filepath.Join(state, statedir.MetricsFile))

	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"another eps0", []string{"--eps0", "3"}, []string{"--eps0 was 2, now 3", "to resume", "new --state"}},
		{"another dataset", []string{"--dataset", "mnist", "--data-dir", dir}, []string{"--dataset was synthetic, now mnist"}},
		{"another seed", []string{"--seed", "7"}, []string{"--seed was 1, now 7"}},
		{"removed --resume", []string{"--resume", filepath.Join(dir, "x.ckpt")}, []string{"replaced by --state"}},
		{"removed --checkpoint", []string{"--checkpoint", filepath.Join(dir, "x.ckpt")}, []string{"replaced by --state"}},
	} {
		_, err := runTrainCmd(t, append(append([]string{}, base...), tc.args...)...)
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %v, want it to say %q", tc.name, err, w)
			}
		}
	}
	if after, _ := os.ReadFile(filepath.Join(state, statedir.MetricsFile)); string(after) != string(metricsBefore) {
		t.Error("a refused rerun touched the run's metrics")
	}

	// The directory is locked while a run holds it.
	d, err := statedir.Open(state, statedir.Options{Flags: map[string]string{}, MayDiffer: nil})
	if err == nil {
		// Open compares flags: an empty map differs, so this must not succeed.
		d.Close()
		t.Fatal("statedir.Open with other flags succeeded")
	}
	lock, err := os.OpenFile(filepath.Join(state, statedir.LockFile), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := flockExclusive(lock); err != nil {
		t.Fatal(err)
	}
	if _, err := runTrainCmd(t, base...); err == nil || !strings.Contains(err.Error(), "in use by another process") {
		t.Errorf("second run on a locked state directory: %v, want a lock error", err)
	}
}

// TestTrainChecksOutputsFirst: a bad --metrics or --state path is reported
// before any training, and no missing parent directory is created.
func TestTrainChecksOutputsFirst(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--metrics", filepath.Join(dir, "missing", "m.jsonl")}, "--metrics"},
		{[]string{"--state", filepath.Join(dir, "missing", "run")}, "--state"},
		{[]string{"--state", filepath.Join(dir, "run"), "--metrics", filepath.Join(dir, "nope", "m.jsonl")}, "--metrics"},
	} {
		args := append(append([]string{}, small...), "--epochs", "50")
		out, err := runTrainCmd(t, append(args, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(out, "train: ") {
			t.Errorf("%v: error %v, output %q; want an error naming %s before any round", tc.args, err, out, tc.want)
		}
	}
	for _, p := range []string{"missing", "nope"} {
		if _, err := os.Stat(filepath.Join(dir, p)); !os.IsNotExist(err) {
			t.Errorf("%s was created", p)
		}
	}
	// An existing metrics file is not truncated by a new run without --state.
	m := filepath.Join(dir, "m.jsonl")
	os.WriteFile(m, []byte("{\"round\":0}\n"), 0o644)
	if _, err := runTrainCmd(t, append(append([]string{}, small...), "--epochs", "1", "--metrics", m)...); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("existing metrics file: %v", err)
	}
	if b, _ := os.ReadFile(m); string(b) != "{\"round\":0}\n" {
		t.Error("existing metrics file was modified")
	}
}

// TestTrainLedgerAgreesWithAccount: after a run (and a rerun of the
// finished run, which must still print the ledger's epsilon), `ledger show`
// and `account` give the same epsilon for the rounds released.
func TestTrainLedgerAgreesWithAccount(t *testing.T) {
	state := filepath.Join(t.TempDir(), "run")
	args := append(append([]string{}, small...), "--epochs", "2", "--state", state)
	if out, err := runTrainCmd(t, args...); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	out, err := runTrainCmd(t, args...)
	if err != nil || !strings.Contains(out, "(20 rounds debited; best (") || strings.Contains(out, "n/a") {
		t.Fatalf("rerun of a finished run: %v\n%s", err, out)
	}
	show, err := runCmd(t, newLedgerCmd, "show", "--state", state, "--json")
	if err != nil {
		t.Fatalf("%v\n%s", err, show)
	}
	var ls struct {
		Rounds  int64   `json:"rounds"`
		Epsilon float64 `json:"epsilon"`
		Delta   float64 `json:"delta"`
	}
	if err := json.Unmarshal([]byte(show), &ls); err != nil {
		t.Fatalf("%v\n%s", err, show)
	}
	acc, err := runCmd(t, newAccountCmd, "--bound", "best", "--n", "200", "--k", "20", "--eps0", "2", "--steps", "20", "--delta", "1e-5", "--json")
	if err != nil {
		t.Fatalf("%v\n%s", err, acc)
	}
	var a struct {
		Epsilon float64 `json:"epsilon"`
	}
	if err := json.Unmarshal([]byte(acc), &a); err != nil {
		t.Fatalf("%v\n%s", err, acc)
	}
	if ls.Rounds != 20 || ls.Delta != 1e-5 || ls.Epsilon != a.Epsilon || !(a.Epsilon > 0) {
		t.Fatalf("ledger show: %d rounds, epsilon %v at %v; account: %v", ls.Rounds, ls.Epsilon, ls.Delta, a.Epsilon)
	}
}

// flockExclusive takes the lock a running train holds on its state
// directory, as a second process would see it.
func flockExclusive(f *os.File) error {
	return unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
}

// TestTrainPlotDoesNotCreateDirectories: a missing parent of --out is an
// error naming --out, not a new directory.
func TestTrainPlotDoesNotCreateDirectories(t *testing.T) {
	dir := t.TempDir()
	m := filepath.Join(dir, "m.jsonl")
	os.WriteFile(m, []byte("{\"round\":1,\"epsilon\":0.5,\"test_accuracy\":0.9}\n"), 0o644)
	_, err := runTrainCmd(t, "plot", "--metrics", m, "--out", filepath.Join(dir, "missing", "p.png"))
	if err == nil || !strings.Contains(err.Error(), "--out") {
		t.Fatalf("plot to a missing directory: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "missing")); !os.IsNotExist(err) {
		t.Fatal("train plot created the missing directory")
	}
}
