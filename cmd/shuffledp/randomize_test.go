package main

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// TestRandomizeContract checks the output contract scripts rely on: N lines,
// each a JSON array of D numbers, whose mean is near the (clipped) input.
func TestRandomizeContract(t *testing.T) {
	for _, tc := range []struct {
		args []string
		dim  int
		mean []float64
		tol  float64
	}{
		{[]string{"--randomizer", "rinf", "--eps0", "2", "--dim", "3", "--input", "0.5,-0.25,2", "--samples", "20000", "--seed", "1"}, 3, []float64{0.5, -0.25, 1}, 0.12},
		{[]string{"--randomizer", "r1", "--eps0", "2", "--dim", "3", "--input", "0.5,-0.25,0", "--samples", "20000", "--seed", "2"}, 3, []float64{0.5, -0.25, 0}, 0.06},
		{[]string{"--randomizer", "r2", "--eps0", "2", "--dim", "2", "--input", "0.6,0", "--samples", "20000", "--seed", "3"}, 2, []float64{0.6, 0}, 0.12},
		{[]string{"--randomizer", "krr", "--eps0", "1", "--dim", "3", "--input", "0,1,0", "--samples", "20000", "--seed", "4"}, 3, []float64{0, 1, 0}, 0.06},
		{[]string{"--randomizer", "rr", "--eps0", "1", "--dim", "1", "--input", "1", "--samples", "20000", "--seed", "5"}, 1, []float64{1}, 0.04},
		{[]string{"--randomizer", "gaussian", "--sigma", "0.5", "--clip", "2", "--dim", "2", "--input", "3,4", "--samples", "20000", "--seed", "6"}, 2, []float64{1.2, 1.6}, 0.03},
	} {
		out, err := runCmd(t, newRandomizeCmd, tc.args...)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if len(lines) != 20000 {
			t.Fatalf("%v: %d lines", tc.args, len(lines))
		}
		sum := make([]float64, tc.dim)
		for _, l := range lines {
			var z []float64
			if err := json.Unmarshal([]byte(l), &z); err != nil || len(z) != tc.dim {
				t.Fatalf("%v: bad line %q (%v)", tc.args, l, err)
			}
			for i, v := range z {
				sum[i] += v
			}
		}
		// tol is about 5 standard errors of the mean for these settings.
		for i := range sum {
			if m := sum[i] / 20000; math.Abs(m-tc.mean[i]) > tc.tol {
				t.Errorf("%v: mean[%d] = %.4f, want %.4f ± %.3f", tc.args, i, m, tc.mean[i], tc.tol)
			}
		}
	}
}

func TestRandomizeSeedReproducible(t *testing.T) {
	args := []string{"--randomizer", "rinf", "--eps0", "1", "--dim", "2", "--input", "0,0", "--samples", "5", "--seed", "9"}
	a, err := runCmd(t, newRandomizeCmd, args...)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := runCmd(t, newRandomizeCmd, args...)
	if a != b {
		t.Fatal("same seed, different output")
	}
}

func TestRandomizeErrorsNameTheFlag(t *testing.T) {
	for flag, args := range map[string][]string{
		"--randomizer": {"--eps0", "1", "--dim", "1", "--input", "0"},
		"--eps0":       {"--randomizer", "rinf", "--dim", "1", "--input", "0"},
		"--dim":        {"--randomizer", "rinf", "--eps0", "1", "--dim", "2", "--input", "0"},
		"--input":      {"--randomizer", "rinf", "--eps0", "1", "--dim", "1", "--input", "x"},
		"--samples":    {"--randomizer", "rinf", "--eps0", "1", "--dim", "1", "--input", "0", "--samples", "0"},
		"--sigma":      {"--randomizer", "gaussian", "--dim", "1", "--input", "0"},
		"--clip":       {"--randomizer", "rinf", "--eps0", "1", "--dim", "1", "--input", "0", "--clip", "-1"},
		"laplace":      {"--randomizer", "laplace", "--eps0", "1", "--dim", "1", "--input", "0"},
	} {
		_, err := runCmd(t, newRandomizeCmd, args...)
		if err == nil || !strings.Contains(err.Error(), flag) {
			t.Errorf("%v: err = %v, want it to name %s", args, err, flag)
		}
	}
}

func TestAuditCommand(t *testing.T) {
	out, err := runCmd(t, newAuditCmd, "--randomizer", "rinf", "--eps0", "1.5", "--dim", "100", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		MaxLogRatio float64 `json:"max_log_ratio"`
		MaxRelBias  float64 `json:"max_rel_bias"`
		OK          bool    `json:"ok"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if !res.OK || math.Abs(res.MaxLogRatio-1.5) > 1e-12 || res.MaxRelBias > 1e-12 {
		t.Errorf("audit result %+v", res)
	}
	out, err = runCmd(t, newAuditCmd, "--randomizer", "krr", "--eps0", "3", "--dim", "5")
	if err != nil || !strings.Contains(out, "verdict          ok") {
		t.Errorf("text audit: %v\n%s", err, out)
	}
	if _, err := runCmd(t, newAuditCmd, "--randomizer", "gaussian", "--eps0", "1", "--dim", "5"); err == nil {
		t.Error("audit of gaussian should be refused")
	}
	out, err = runCmd(t, newAuditCmd, "--randomizer", "r2", "--eps0", "2", "--dim", "50", "--json")
	if err != nil || !strings.Contains(out, `"method": "analytic"`) || !strings.Contains(out, `"ok": true`) {
		t.Errorf("r2 audit: %v\n%s", err, out)
	}
}
