package main

import (
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
