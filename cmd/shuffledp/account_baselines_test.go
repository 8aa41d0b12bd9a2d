package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func runAccountBaseline(t *testing.T, args ...string) (string, error) {
	t.Helper()
	return runCmd(t, newAccountCmd, args...)
}

func TestAccountFMT20Baselines(t *testing.T) {
	single := []string{"--mechanism", "shuffle", "--n", "1e5", "--eps0", "4", "--steps", "1", "--delta", "1e-6", "--json"}
	for _, c := range []struct {
		args   []string
		lo, hi float64
	}{
		// apple/ml-shuffling-amplification's example: [0.1675385583, 0.1727905508].
		{append([]string{"--bound", "fmt20-numeric"}, single...), 0.1675385583, 0.1727905508},
		{append([]string{"--bound", "fmt20-analytic"}, single...), 0.5378040242, 0.5378040243},
		{append([]string{"--bound", "fmt20+kov15"}, single...), 0.1675385583, 0.1727905508},
		// NeurIPS'21 Fig. 2a setting (the command's defaults).
		{[]string{"--bound", "fmt20+kov15", "--json"}, 2.5, 2.55},
	} {
		out, err := runAccountBaseline(t, c.args...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", c.args, err, out)
		}
		var v struct {
			Bound   string  `json:"bound"`
			Epsilon float64 `json:"epsilon"`
			Delta   float64 `json:"delta"`
		}
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatalf("%v: bad JSON %v\n%s", c.args, err, out)
		}
		if v.Epsilon < c.lo || v.Epsilon > c.hi || v.Bound != c.args[1] {
			t.Errorf("%v: %+v, want epsilon in [%g, %g]", c.args, v, c.lo, c.hi)
		}
	}
}

func TestAccountFMT20NotApplicable(t *testing.T) {
	t.Parallel() // CPU-bound: beside the package's other parallel tests, on both cores
	for _, b := range []string{"fmt20-analytic", "fmt20-numeric"} {
		_, err := runAccountBaseline(t, "--bound", b, "--json")
		if err == nil || !strings.Contains(err.Error(), "--mechanism shuffle --steps 1") {
			t.Errorf("%s on subsampled-shuffle: %v", b, err)
		}
	}
	out, err := runAccountBaseline(t, "--mechanism", "shuffle", "--n", "2000", "--eps0", "1", "--steps", "1", "--delta", "1e-6")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{"fmt20+kov15", "fmt20-analytic", "fmt20-numeric"} {
		if !strings.Contains(out, b) {
			t.Errorf("table lacks %s:\n%s", b, out)
		}
	}
}
