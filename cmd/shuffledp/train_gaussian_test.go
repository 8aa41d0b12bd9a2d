package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// gaussianSmall is a fast Gaussian run on synthetic data: 500 clients,
// logistic regression, 12 rounds with an evaluation every 4.
var gaussianSmall = []string{"--dataset", "synthetic", "--model", "logreg", "--clients", "500",
	"--randomizer", "gaussian", "--sigma", "0.9", "--clip", "0.1", "--lr", "0.5", "--no-progress",
	"--test-size", "100", "--eval-every", "4"}

// TestTrainGaussianEpsilonIsAccount is the Gaussian runs' acceptance check through the
// CLI: a Gaussian-client run (k of n) and a check-in run report in every
// metrics row the epsilon that `shuffledp account` prints for the rounds
// completed, bit for bit; the central baseline likewise with
// sampled-gaussian and --client-sigma. Under the default adjacency
// (replace-one, in train and account alike) and under --adjacency
// zero-out given to both; every row and account's JSON name it.
func TestTrainGaussianEpsilonIsAccount(t *testing.T) {
	type trainCase struct {
		name      string
		train     []string
		account   []string
		adjacency string
	}
	var cases []trainCase
	for _, tc := range []trainCase{
		{"k-of-n", []string{"--sample", "50", "--epochs", "1.2"},
			[]string{"--mechanism", "subsampled-shuffle-gaussian", "--n", "500", "--k", "50", "--sigma", "0.9"}, ""},
		{"checkin", []string{"--participation", "checkin", "--rate", "0.1", "--epochs", "1.2"},
			[]string{"--mechanism", "checkin-gaussian", "--n", "500", "--rate", "0.1", "--sigma", "0.9"}, ""},
		{"checkin-noise-sum", []string{"--participation", "checkin", "--rate", "0.1", "--epochs", "1.2", "--noise-sum"},
			[]string{"--mechanism", "checkin-gaussian", "--n", "500", "--rate", "0.1", "--sigma", "0.9"}, ""},
	} {
		tc.adjacency = "replace-one"
		cases = append(cases, tc)
		tc.train = append(slices.Clone(tc.train), "--adjacency", "zero-out")
		tc.account = append(slices.Clone(tc.account), "--adjacency", "zero-out")
		tc.name, tc.adjacency = tc.name+"/zero-out", "zero-out"
		cases = append(cases, tc)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			metrics := filepath.Join(t.TempDir(), "m.jsonl")
			args := append(append(append([]string{}, gaussianSmall...), tc.train...), "--metrics", metrics)
			if out, err := runTrainCmd(t, args...); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			recs := readRecords(t, metrics)
			if len(recs) != 4 { // rounds 0, 4, 8, 12
				t.Fatalf("%d records, want 4", len(recs))
			}
			for _, r := range recs {
				round := int(r["round"].(float64))
				out, err := runCmd(t, newAccountCmd, append(append([]string{"--bound", "best"}, tc.account...),
					"--steps", fmt.Sprint(round), "--delta", "1e-5", "--json")...)
				if err != nil {
					t.Fatalf("account: %v\n%s", err, out)
				}
				var acc struct {
					Epsilon   float64
					Adjacency string
				}
				if err := json.Unmarshal([]byte(out[strings.Index(out, "{"):]), &acc); err != nil {
					t.Fatalf("account output %q: %v", out, err)
				}
				if got, ok := r["epsilon"].(float64); !ok || got != acc.Epsilon {
					t.Errorf("round %d: metrics epsilon %v, account %.17g", round, r["epsilon"], acc.Epsilon)
				}
				if r["adjacency"] != tc.adjacency || acc.Adjacency != tc.adjacency {
					t.Errorf("round %d: metrics adjacency %v, account %q, want %s", round, r["adjacency"], acc.Adjacency, tc.adjacency)
				}
			}
		})
	}
}

func TestTrainGaussianRejectsBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"--sample", "50", "--sigma", "0"}, "sigma"},
		{[]string{"--sample", "50", "--eps0", "2"}, "eps0"},
		{[]string{"--participation", "checkin", "--rate", "0"}, "rate"},
		{[]string{"--participation", "checkin", "--rate", "0.1", "--sample", "50"}, "sample"},
		{[]string{"--sample", "50", "--participation", "everyone"}, "participation"},
		{[]string{"--sample", "50", "--client-sigma", "1"}, "client-sigma"},
		{[]string{"--sample", "50", "--randomizer", "central-gaussian", "--client-sigma", "1", "--sigma", "1"}, "client-sigma"},
		{[]string{"--randomizer", "central-gaussian", "--sample", "50", "--rate", "0.1"}, "rate"},
		{[]string{"--sample", "50", "--randomizer", "rinf", "--eps0", "1"}, "sigma"},
		{[]string{"--sample", "50", "--adjacency", "add-remove"}, "adjacency"},
		{[]string{"--sample", "50", "--adjacency", "neighbour"}, "adjacency"},
		{[]string{"--randomizer", "central-gaussian", "--sample", "50", "--adjacency", "replace-one"}, "adjacency"},
	} {
		args := append(append([]string{}, gaussianSmall...), tc.args...)
		_, err := runTrainCmd(t, args...)
		if err == nil || !strings.Contains(err.Error(), tc.flag) {
			t.Errorf("%v: error %v, want one naming %q", tc.args, err, tc.flag)
		}
	}
	if _, err := runTrainCmd(t, "--randomizer", "gaussian", "--dataset", "synthetic", "--sample", "50", "--no-progress"); err == nil || !strings.Contains(err.Error(), "sigma") {
		t.Errorf("gaussian without --sigma: %v, want an error naming sigma", err)
	}
}

// TestTrainCentralGaussianClientSigma: --client-sigma s sets sigma =
// sqrt(k) s, recorded in the metrics, and epsilon is account's
// sampled-gaussian with --k --n --client-sigma.
func TestTrainCentralGaussianClientSigma(t *testing.T) {
	metrics := filepath.Join(t.TempDir(), "m.jsonl")
	args := []string{"--dataset", "synthetic", "--model", "logreg", "--clients", "500", "--sample", "50",
		"--randomizer", "central-gaussian", "--client-sigma", "0.86", "--clip", "0.1", "--lr", "0.5",
		"--no-progress", "--test-size", "100", "--epochs", "0.4", "--metrics", metrics}
	if out, err := runTrainCmd(t, args...); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	recs := readRecords(t, metrics)
	last := recs[len(recs)-1]
	out, err := runCmd(t, newAccountCmd, "--bound", "best", "--mechanism", "sampled-gaussian", "--n", "500", "--k", "50",
		"--client-sigma", "0.86", "--steps", fmt.Sprint(int(last["round"].(float64))), "--delta", "1e-5", "--json")
	if err != nil {
		t.Fatalf("account: %v\n%s", err, out)
	}
	var acc struct{ Epsilon, Sigma, Rate float64 }
	if err := json.Unmarshal([]byte(out[strings.Index(out, "{"):]), &acc); err != nil {
		t.Fatal(err)
	}
	if last["epsilon"] != acc.Epsilon || last["sigma"] != acc.Sigma || last["rate"] != acc.Rate || last["participation"] != "poisson" ||
		last["adjacency"] != "add-remove" {
		t.Errorf("metrics epsilon %v sigma %v rate %v participation %v; account epsilon %v sigma %v rate %v",
			last["epsilon"], last["sigma"], last["rate"], last["participation"], acc.Epsilon, acc.Sigma, acc.Rate)
	}
}

// TestTrainCheckInStateResumes: a check-in run in a state directory stops
// and resumes (rerun with a larger --epochs), its rounds continue and the
// ledger's epsilon is account's for all of them; a rerun with another
// --rate is refused, naming it.
func TestTrainCheckInStateResumes(t *testing.T) {
	state := filepath.Join(t.TempDir(), "run")
	args := append(append([]string{}, gaussianSmall...), "--participation", "checkin", "--rate", "0.1", "--state", state)
	if out, err := runTrainCmd(t, append(args, "--epochs", "0.4")...); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	out, err := runTrainCmd(t, append(args, "--epochs", "0.8")...)
	if err != nil || !strings.Contains(out, "after round 8") {
		t.Fatalf("resume: %v\n%s", err, out)
	}
	recs := readRecords(t, filepath.Join(state, "metrics.jsonl"))
	last := recs[len(recs)-1]
	acc, err := runCmd(t, newAccountCmd, "--bound", "best", "--mechanism", "checkin-gaussian", "--n", "500", "--rate", "0.1", "--sigma", "0.9",
		"--steps", "8", "--delta", "1e-5", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var a struct{ Epsilon float64 }
	if err := json.Unmarshal([]byte(acc[strings.Index(acc, "{"):]), &a); err != nil {
		t.Fatal(err)
	}
	if last["round"] != 8.0 || last["epsilon"] != a.Epsilon || last["ledger_rounds"] != 8.0 {
		t.Errorf("last record round %v epsilon %v ledger_rounds %v; account for 8 rounds %v", last["round"], last["epsilon"], last["ledger_rounds"], a.Epsilon)
	}
	if _, err := runTrainCmd(t, append(args, "--epochs", "0.8", "--adjacency", "zero-out")...); err == nil || !strings.Contains(err.Error(), "adjacency") {
		t.Errorf("rerun with another --adjacency: %v, want a refusal naming adjacency", err)
	}
	args[len(args)-3] = "0.2" // --rate 0.2
	if _, err := runTrainCmd(t, append(args, "--epochs", "0.8")...); err == nil || !strings.Contains(err.Error(), "rate") {
		t.Errorf("rerun with another --rate: %v, want a refusal naming rate", err)
	}
}

// TestTrainLegacyAdjacencyResumes: a zero-out run's state directory has the
// identity (run.json without adjacency), checkpoint (no adjacency) and
// meaning of a run started before --adjacency existed; it resumes with
// --adjacency zero-out, and without it (the default is now replace-one) it
// is refused, naming adjacency. The ledger's epsilon stays zero-out's.
func TestTrainLegacyAdjacencyResumes(t *testing.T) {
	state := filepath.Join(t.TempDir(), "run")
	args := append(append([]string{}, gaussianSmall...), "--sample", "50", "--state", state)
	if out, err := runTrainCmd(t, append(args, "--epochs", "0.4", "--adjacency", "zero-out")...); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if _, err := runTrainCmd(t, append(args, "--epochs", "0.8")...); err == nil || !strings.Contains(err.Error(), "adjacency") {
		t.Errorf("resume under the default replace-one: %v, want a refusal naming adjacency", err)
	}
	if out, err := runTrainCmd(t, append(args, "--epochs", "0.8", "--adjacency", "zero-out")...); err != nil {
		t.Fatalf("resume under zero-out: %v\n%s", err, out)
	}
	recs := readRecords(t, filepath.Join(state, "metrics.jsonl"))
	last := recs[len(recs)-1]
	out, err := runCmd(t, newAccountCmd, "--bound", "best", "--mechanism", "subsampled-shuffle-gaussian", "--n", "500", "--k", "50", "--sigma", "0.9",
		"--adjacency", "zero-out", "--steps", "8", "--delta", "1e-5", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var a struct{ Epsilon float64 }
	if err := json.Unmarshal([]byte(out[strings.Index(out, "{"):]), &a); err != nil {
		t.Fatal(err)
	}
	if last["round"] != 8.0 || last["epsilon"] != a.Epsilon || last["adjacency"] != "zero-out" {
		t.Errorf("last record round %v epsilon %v adjacency %v; account zero-out for 8 rounds %v", last["round"], last["epsilon"], last["adjacency"], a.Epsilon)
	}
}
