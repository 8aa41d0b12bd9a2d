package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/shuffledp/shuffledp/route"
)

func runCalibrate(t *testing.T, args ...string) (string, error) {
	t.Helper()
	return runCmd(t, newCalibrateCmd, args...)
}

// accountEpsilon runs `account --json` and returns its epsilon.
func accountEpsilon(t *testing.T, args ...string) float64 {
	t.Helper()
	out, err := runAccount(t, append(args, "--json")...)
	if err != nil {
		t.Fatalf("account %v: %v\n%s", args, err, out)
	}
	var v struct {
		Epsilon float64 `json:"epsilon"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("account %v: %v\n%s", args, err, out)
	}
	return v.Epsilon
}

// TestCalibrateText: the default output is one human-readable line with the
// answer, the epsilon it spends and the adjacency it is for, the epsilons
// rounded up at ten digits (0.9999987799393169 prints 0.99999878,
// 1.0000004583298394 1.000000459); a conjecture bound (Thm 1 at 18.96/2 =
// 9.48) is labelled in the note.
func TestCalibrateText(t *testing.T) {
	out, err := runCalibrate(t, "--mechanism", "shuffle-gaussian", "--n", "60000", "--sigma", "18.96", "--bound", "iclr23-thm1",
		"--delta", "1e-5", "--epsilon", "1", "--solve", "steps")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"steps = 327664: epsilon 0.99999878 ", "<= target 1", "steps = 327665 would spend epsilon 1.000000459",
		"conjecture (replace-one, numerically checked): ICLR'23 Thm 1's worst-case pair", "adjacency replace-one"} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}
}

// TestCalibrateSearchEdge: an answer at the end of the search range says so.
func TestCalibrateSearchEdge(t *testing.T) {
	out, err := runCalibrate(t, "--mechanism", "shuffle-gaussian", "--n", "100", "--steps", "0",
		"--epsilon", "1", "--solve", "sigma")
	if err != nil || !strings.Contains(out, "sigma = 0.01: epsilon 0 ") || !strings.Contains(out, "search floor sigma = 0.01 reached") {
		t.Errorf("steps 0: %v\n%s", err, out)
	}
}

// TestCalibrateErrors: unreachable targets and bad flags fail with a message
// naming the flag.
func TestCalibrateErrors(t *testing.T) {
	sg := []string{"--mechanism", "shuffle-gaussian", "--n", "1000", "--steps", "10", "--epsilon", "1"}
	ldp := []string{"--mechanism", "subsampled-shuffle", "--n", "1e6", "--k", "1000", "--epsilon", "1"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--solve", "sigma", "--mechanism", "shuffle-gaussian"}, "--epsilon"},
		{append(sg, "--solve", "sigma", "--epsilon", "0"), "--epsilon"},
		{append(sg, "--solve", "sigma", "--epsilon", "Inf"), "--epsilon"},
		{sg, "--solve"},
		{append(sg, "--solve", "n"), "--solve"},
		{append(sg, "--solve", "sigma", "--sigma", "2"), "--sigma"},
		{append(sg, "--solve", "eps0"), "--solve eps0"},
		{append(sg, "--solve", "k"), "--solve k"},
		{append(sg, "--solve", "rate"), "--solve rate"},
		{[]string{"--mechanism", "checkin-gaussian", "--sigma", "5", "--rate", "0.1", "--epsilon", "1", "--solve", "rate"}, "--rate"},
		{[]string{"--mechanism", "shuffle-gaussian", "--epsilon", "1", "--solve", "steps"}, "--sigma"},
		{append(sg, "--solve", "sigma", "--bound", "all"), "--bound"},
		{append(sg, "--solve", "sigma", "--delta", "2"), "--delta"},
		{append(sg, "--solve", "sigma", "--mechanism", "nope"), "--mechanism"},
		{append(ldp, "--solve", "sigma"), "--solve sigma"},
		{append(ldp, "--solve", "k"), "--k"},
		{append(ldp, "--solve", "eps0", "--steps", "10", "--bound", "neurips21-lower"), "lower bound"},
		// Unreachable: eq. (10)'s j >= 3 terms do not vanish as sigma grows
		// (with "best", Cor. 1 would reach the target).
		{[]string{"--mechanism", "checkin-gaussian", "--bound", "iclr23-eq11", "--n", "60000", "--rate", "0.1", "--steps", "100", "--delta", "1e-5",
			"--orders", "2:32", "--epsilon", "1", "--solve", "sigma"}, "unreachable"},
		// Unreachable: one round already spends more.
		{[]string{"--mechanism", "shuffle-gaussian", "--n", "10", "--sigma", "1", "--delta", "1e-5",
			"--epsilon", "0.01", "--solve", "steps"}, "unreachable"},
	} {
		out, err := runCalibrate(t, c.args...)
		if err == nil {
			t.Errorf("%v: accepted\n%s", c.args, out)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %q does not mention %q", c.args, err, c.want)
		}
	}
}

// benchmarkCalibrate times one `shuffledp calibrate` call from cold curve
// caches.
func benchmarkCalibrate(b *testing.B, args ...string) {
	for i := 0; i < b.N; i++ {
		route.ResetCaches()
		cmd := newCalibrateCmd()
		var out bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetArgs(args)
		if err := cmd.Execute(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCalibrateSigmaShuffleGaussian: the smallest sigma for eps <= 1 at
// n=60000, T=100, delta=1e-5 (every integer order to 4096 per evaluation).
func BenchmarkCalibrateSigmaShuffleGaussian(b *testing.B) {
	benchmarkCalibrate(b, "--mechanism", "shuffle-gaussian", "--n", "60000", "--steps", "100",
		"--delta", "1e-5", "--epsilon", "1", "--solve", "sigma")
}

// BenchmarkCalibrateStepsShuffleGaussian: the largest T for eps <= 1 at
// n=60000, sigma=9.48 (one curve, composed once per evaluation).
func BenchmarkCalibrateStepsShuffleGaussian(b *testing.B) {
	benchmarkCalibrate(b, "--mechanism", "shuffle-gaussian", "--n", "60000", "--sigma", "9.48",
		"--delta", "1e-5", "--epsilon", "1", "--solve", "steps")
}

// BenchmarkCalibrateSigmaSubsampledGaussian: k=600 of n=60000, T=1000; the
// inner shuffle of 600 clients needs binary powering up to order 4096.
func BenchmarkCalibrateSigmaSubsampledGaussian(b *testing.B) {
	benchmarkCalibrate(b, "--mechanism", "subsampled-shuffle-gaussian", "--n", "60000", "--k", "600",
		"--steps", "1000", "--delta", "1e-5", "--epsilon", "1", "--solve", "sigma")
}

// BenchmarkCalibrateEps0SubsampledShuffle: the largest eps0 for eps <= 1 in
// the NeurIPS'21 Fig. 2a setting (n=1e6, k=1000, T=1e5, delta=1e-8).
func BenchmarkCalibrateEps0SubsampledShuffle(b *testing.B) {
	benchmarkCalibrate(b, "--mechanism", "subsampled-shuffle", "--n", "1e6", "--k", "1000",
		"--steps", "100000", "--delta", "1e-8", "--epsilon", "1", "--solve", "eps0")
}

// BenchmarkCalibrateKSubsampledShuffle: the largest k for eps <= 1 in the
// same setting at eps0=2.
func BenchmarkCalibrateKSubsampledShuffle(b *testing.B) {
	benchmarkCalibrate(b, "--mechanism", "subsampled-shuffle", "--n", "1e6", "--eps0", "2",
		"--steps", "100000", "--delta", "1e-8", "--epsilon", "1", "--solve", "k")
}

// TestCalibrateNoteComplete: at the end of the search range
// the note is a whole sentence (it used to end in a dangling "; " cut from
// an empty second part), and with a second part both are kept.
func TestCalibrateNoteComplete(t *testing.T) {
	t.Parallel() // CPU-bound: beside the package's other parallel tests, on both cores
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--epsilon", "1e300", "--solve", "steps"},
			"note: search ceiling steps = 1099511627776 reached: more steps may meet the target too\n"},
		{[]string{"--epsilon", "1e300", "--solve", "eps0", "--steps", "10"},
			"note: search ceiling eps0 = 64 reached: a larger eps0 may meet the target too\n"},
		{[]string{"--mechanism", "checkin-gaussian", "--bound", "iclr23-eq11", "--n", "100", "--sigma", "50", "--steps", "1",
			"--delta", "1e-5", "--orders", "2:32", "--epsilon", "100", "--solve", "rate"},
			"note: rate = 1 (every client checks in) meets the target; (conjecture (replace-one, numerically checked): ICLR'23 Thm 1's worst-case pair)\n"},
	} {
		out, err := runCalibrate(t, c.args...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", c.args, err, out)
		}
		if !strings.Contains(out, c.want) {
			t.Errorf("%v: want %q in\n%s", c.args, c.want, out)
		}
		if strings.Contains(out, ";\n") {
			t.Errorf("%v: a line ends in ';'\n%s", c.args, out)
		}
	}
}
