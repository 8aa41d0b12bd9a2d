package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTrainPlotRejectsNegativeEpsilon checks that train plot refuses a
// negative or non-finite --max-epsilon, and metrics whose epsilon is
// negative (a spent privacy budget is never below zero), naming the flag or
// the file and line, and writes no image.
func TestTrainPlotRejectsNegativeEpsilon(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.jsonl", `{"epoch":1,"round":10,"test_accuracy":0.5,"epsilon":0.3,"delta":1e-5}
{"epoch":2,"round":20,"test_accuracy":0.6,"epsilon":0.7,"delta":1e-5}
`)
	neg := write("neg.jsonl", `{"epoch":1,"round":10,"test_accuracy":0.5,"epsilon":0.3,"delta":1e-5}
{"epoch":2,"round":20,"test_accuracy":0.6,"epsilon":-0.7,"delta":1e-5}
`)
	png := filepath.Join(dir, "p.png")
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--metrics", good, "--max-epsilon", "-1"}, []string{"--max-epsilon", "-1"}},
		{[]string{"--metrics", good, "--max-epsilon", "NaN"}, []string{"--max-epsilon"}},
		{[]string{"--metrics", good, "--max-epsilon", "+Inf"}, []string{"--max-epsilon"}},
		{[]string{"--metrics", neg}, []string{"neg.jsonl", "line 2", "epsilon", "-0.7"}},
		{[]string{"--metrics", good, "--metrics", neg, "--max-epsilon", "0.5"}, []string{"neg.jsonl", "line 2", "-0.7"}},
	} {
		args := append([]string{"plot", "--out", png}, c.args...)
		_, err := runCmd(t, newTrainCmd, args...)
		if err == nil {
			t.Errorf("%v: no error", c.args)
		} else {
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%v: error %q does not name %s", c.args, err, w)
				}
			}
		}
		if _, err := os.Stat(png); !os.IsNotExist(err) {
			t.Fatalf("%v: %s written", c.args, png)
		}
	}
	// The valid cases still plot.
	for _, args := range [][]string{{"--metrics", good}, {"--metrics", good, "--max-epsilon", "0.5"}} {
		if _, err := runCmd(t, newTrainCmd, append([]string{"plot", "--out", png}, args...)...); err != nil {
			t.Errorf("%v: %v", args, err)
		}
	}
}

// --x epsilon_neurips21 with --reference and --ema draws the paper's axis
// and points; mixing validation and test runs, an unknown reference and an
// unknown axis are refused.
func TestTrainPlotReferenceAndAxis(t *testing.T) {
	dir := t.TempDir()
	row := func(eps, epsN, acc float64, evalSet string) string {
		s := fmt.Sprintf(`{"epoch":1,"round":1,"test_accuracy":%g,"test_accuracy_ema":%g,"epsilon":%g,"epsilon_neurips21":%g,"delta":1e-5,"randomizer":"rinf"`, acc, acc+0.01, eps, epsN)
		if evalSet != "" {
			s += `,"eval_set":"` + evalSet + `"`
		}
		return s + "}\n"
	}
	test := filepath.Join(dir, "test.jsonl")
	val := filepath.Join(dir, "val.jsonl")
	os.WriteFile(test, []byte(row(0.1, 0.5, 0.5, "")+row(0.2, 1.4, 0.7, "")), 0o644)
	os.WriteFile(val, []byte(row(0.1, 0.5, 0.5, "validation")), 0o644)
	out := filepath.Join(dir, "p.png")
	if _, err := runCmd(t, newTrainPlotCmd, "--metrics", test, "--x", "epsilon_neurips21", "--ema",
		"--reference", "neurips21-fig3", "--out", out); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(out); err != nil || st.Size() == 0 {
		t.Fatalf("no plot written: %v", err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--metrics", test, "--metrics", val}, "validation"},
		{[]string{"--metrics", test, "--reference", "fig99"}, "reference"},
		{[]string{"--metrics", test, "--x", "round"}, "x must be"},
	} {
		_, err := runCmd(t, newTrainPlotCmd, append(tc.args, "--out", filepath.Join(dir, "q.png"))...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one containing %q", tc.args, err, tc.want)
		}
	}
}
