package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runTrainCmd(t *testing.T, args ...string) (string, error) {
	t.Helper()
	return runCmd(t, newTrainCmd, args...)
}

// small is a fast private run on synthetic data: 200 clients, 20 per round
// (10 rounds per epoch), logistic regression.
var small = []string{"--dataset", "synthetic", "--model", "logreg", "--clients", "200", "--sample", "20",
	"--randomizer", "rinf", "--clip", "0.1", "--eps0", "2", "--lr", "0.5", "--no-progress", "--test-size", "100"}

func TestTrainRejectsBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"--sample", "0"}, "sample"},
		{[]string{"--sample", "201"}, "sample"},
		{[]string{"--clients", "0"}, "clients"},
		{[]string{"--randomizer", "laplace"}, "randomizer"},
		{[]string{"--lr", "0.3,70"}, "lr"},
		{[]string{"--lr", "-1"}, "lr"},
		{[]string{"--clip-norm", "l3"}, "clip-norm"},
		{[]string{"--randomizer", "r1", "--clip-norm", "linf"}, "clip-norm"},
		{[]string{"--linf-clip", "round"}, "linf-clip"},
		{[]string{"--delta", "1"}, "delta"},
		{[]string{"--eps0", "0"}, "eps0"},
		{[]string{"--epochs", "0"}, "epochs"},
		{[]string{"--target-epsilon", "-1"}, "target-epsilon"},
		{[]string{"--dataset", "cifar"}, "dataset"},
		{[]string{"--model", "resnet"}, "model"},
	} {
		args := append(append([]string{}, small...), tc.args...)
		_, err := runTrainCmd(t, args...)
		if err == nil || !strings.Contains(err.Error(), tc.flag) {
			t.Errorf("%v: error %v, want one naming %q", tc.args, err, tc.flag)
		}
	}
	_, err := runTrainCmd(t, "--dataset", "mnist", "--no-progress")
	if err == nil || !strings.Contains(err.Error(), "data-dir") {
		t.Errorf("mnist without --data-dir: error %v, want one naming data-dir", err)
	}
}

func readRecords(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r map[string]any
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("metrics line %q: %v", sc.Text(), err)
		}
		recs = append(recs, r)
	}
	return recs
}

// TestTrainMetricsCheckpointResumePlot runs 2 epochs in a state
// directory, resumes to 3 epochs by rerunning with --epochs 3, checks the
// JSONL contract (required keys, rounds continuing, epsilon growing) and
// plots accuracy vs epsilon.
func TestTrainMetricsCheckpointResumePlot(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "run")
	metrics := filepath.Join(state, "metrics.jsonl")
	args := append(append([]string{}, small...), "--state", state)
	if out, err := runTrainCmd(t, append(args, "--epochs", "2")...); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	out, err := runTrainCmd(t, append(args, "--epochs", "3")...)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "after round 30") {
		t.Errorf("resumed run output %q does not report round 30", out)
	}
	recs := readRecords(t, metrics)
	wantRounds := []float64{0, 10, 20, 30}
	if len(recs) != len(wantRounds) {
		t.Fatalf("%d records, want %d: %v", len(recs), len(wantRounds), recs)
	}
	prevEps := -1.0
	for i, r := range recs {
		if c, ok := r["command"].([]any); !ok || len(c) < 2 || c[0] != "shuffledp" || c[1] != "train" {
			t.Errorf("record %d: command %v, want the command line [shuffledp train ...]", i, r["command"])
		}
		for _, key := range []string{"epoch", "round", "test_accuracy", "epsilon", "delta", "test_loss", "wall_seconds", "client_updates_per_sec", "ledger_rounds"} {
			if _, ok := r[key]; !ok {
				t.Fatalf("record %d lacks %q: %v", i, key, r)
			}
		}
		if r["round"] != wantRounds[i] || r["epoch"] != float64(i) || r["delta"] != 1e-5 {
			t.Errorf("record %d: round %v epoch %v delta %v", i, r["round"], r["epoch"], r["delta"])
		}
		eps, ok := r["epsilon"].(float64)
		if !ok || !(eps > prevEps) {
			t.Errorf("record %d: epsilon %v not above %v", i, r["epsilon"], prevEps)
		}
		prevEps = eps
	}

	png := filepath.Join(dir, "acc.png")
	cmd := newTrainCmd()
	var buf bytes.Buffer
	cmd.SetOut(&buf)
	cmd.SetErr(&buf)
	cmd.SetArgs([]string{"plot", "--metrics", metrics, "--out", png})
	if err := cmd.Execute(); err != nil {
		t.Fatalf("plot: %v\n%s", err, buf.String())
	}
	if st, err := os.Stat(png); err != nil || st.Size() < 1000 {
		t.Fatalf("plot output: %v %v", st, err)
	}
}

// TestTrainNonePrintsNullEpsilon: the baseline's metrics have epsilon null.
func TestTrainNonePrintsNullEpsilon(t *testing.T) {
	metrics := filepath.Join(t.TempDir(), "m.jsonl")
	args := append(append([]string{}, small...), "--randomizer", "none", "--clip-norm", "l2", "--epochs", "1", "--metrics", metrics)
	if out, err := runTrainCmd(t, args...); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, r := range readRecords(t, metrics) {
		if v, ok := r["epsilon"]; !ok || v != nil {
			t.Fatalf("randomizer none: epsilon %v (present %v), want null", v, ok)
		}
	}
}
