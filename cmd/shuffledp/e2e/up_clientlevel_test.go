package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shuffledp/shuffledp/internal/clitest"
)

// TestUpClientLevel runs `up` with clients of 3 examples dealt by label
// skew, each taking 2 local steps: the run finishes, its metrics record
// the clients' data and that epsilon is for one client's whole data,
// `ledger show` says so too, and the ledger's epsilon is account's for the
// same n, k, eps0 and rounds: what a run of one example a client debits.
// Bad values of the new flags are refused before anything is created,
// naming the flag.
func TestUpClientLevel(t *testing.T) {
	state := filepath.Join(t.TempDir(), "run")
	args := append(append([]string{"up"}, clitest.UpRun...), "--epochs", "1", "--state", state, "--release-when-complete",
		"--examples-per-client", "3", "--partition", "dirichlet:0.5", "--local-steps", "2", "--local-lr", "0.2")
	out, err := child(nil, args...).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "up: run finished") {
		t.Fatalf("up: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "epsilon is for one client's whole data") {
		t.Errorf("up's output does not say what epsilon is for:\n%s", out)
	}
	last, _ := lastMetrics(t, filepath.Join(state, "metrics.jsonl"))
	if last["neighbouring"] != "client" || last["examples_per_client"] != float64(3) || last["partition"] != "dirichlet:0.5" ||
		last["local_steps"] != float64(2) || last["local_lr"] != 0.2 {
		t.Errorf("last record %v", last)
	}
	rounds, eps, _ := clitest.LedgerShow(t, state)
	if want := upAccountEpsilon(t, "6"); rounds != 6 || eps != want {
		t.Fatalf("ledger show: %d rounds, epsilon %v; account over 6 rounds %v", rounds, eps, want)
	}
	if show, err := runCmd(t, "ledger", "show", "--state", state); err != nil || !strings.Contains(show, "neighbouring  one client's whole data") {
		t.Errorf("ledger show: %v\n%s", err, show)
	}

	for _, bad := range []struct {
		args []string
		flag string
	}{
		{[]string{"--examples-per-client", "0"}, "examples-per-client"},
		{[]string{"--partition", "dirichlet:-2"}, "partition"},
		{[]string{"--partition", "shards:2", "--examples-per-client", "3"}, "examples-per-client"},
		{[]string{"--local-steps", "0"}, "local-steps"},
		{[]string{"--local-lr", "0.1"}, "local-lr"},
		{[]string{"--dataset", "mnist", "--data-dir", t.TempDir(), "--clients", "30001", "--sample", "10", "--examples-per-client", "2"}, "examples-per-client"},
	} {
		dir := filepath.Join(t.TempDir(), "refused")
		a := append(append(append([]string{"up"}, clitest.UpRun...), "--epochs", "1", "--state", dir, "--round-timeout", "1s"), bad.args...)
		out, err := child(nil, a...).CombinedOutput()
		if err == nil || !strings.Contains(string(out), bad.flag) {
			t.Errorf("%v: %v, want a refusal naming %s\n%s", bad.args, err, bad.flag, out)
		}
		if _, err := os.Stat(dir); err == nil {
			t.Errorf("%v: refused, but %s was created", bad.args, dir)
		}
	}
}
