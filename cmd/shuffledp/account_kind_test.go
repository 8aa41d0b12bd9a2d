package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/shuffledp/shuffledp/accounting"
)

// TestAccountKindLabels: an RDP lower bound converted to (epsilon, delta) is
// labelled for what it is in the JSON ("kind": "rdp-lower", with the old
// "lower_bound": true kept for existing readers) and in the table (kind
// column and note), and an upper bound is labelled "upper". At n = k = 1,
// eps0 = 0.5, one round, delta = 1e-5 krr3-lower converts to 0.5004, above
// randomized response's exact epsilon 0.49998: exactly why it must not be
// called a lower bound on epsilon.
func TestAccountKindLabels(t *testing.T) {
	base := []string{"--n", "1", "--k", "1", "--eps0", "0.5", "--steps", "1", "--delta", "1e-5"}
	for _, c := range []struct {
		bound, kind string
		lower       bool
	}{
		{accounting.BoundKRR3Lower, accounting.KindRDPLower, true},
		{accounting.BoundNeurIPS21Lower, accounting.KindRDPLower, true},
		{accounting.BoundClonesRDP, accounting.KindUpper, false},
	} {
		out, err := runAccount(t, append(base, "--bound", c.bound, "--json")...)
		if err != nil {
			t.Fatalf("%s: %v\n%s", c.bound, err, out)
		}
		var v struct {
			Kind    string  `json:"kind"`
			Lower   bool    `json:"lower_bound"`
			Note    string  `json:"note"`
			Epsilon float64 `json:"epsilon"`
		}
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatal(err)
		}
		if v.Kind != c.kind || v.Lower != c.lower {
			t.Errorf("%s: kind %q lower_bound %v, want %q %v", c.bound, v.Kind, v.Lower, c.kind, c.lower)
		}
		if c.lower && !strings.Contains(v.Note, "not a lower bound on epsilon") {
			t.Errorf("%s: note %q does not say it is not a lower bound on epsilon", c.bound, v.Note)
		}
		if c.bound == accounting.BoundKRR3Lower && !(v.Epsilon > 0.50035 && v.Epsilon < 0.50045) {
			t.Errorf("krr3-lower at n=k=1: epsilon %.6g, want 0.5004 (above the exact 0.49998)", v.Epsilon)
		}
		txt, err := runAccount(t, append(base, "--bound", c.bound)...)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(txt, " "+c.kind+" ") {
			t.Errorf("%s: table lacks kind %q:\n%s", c.bound, c.kind, txt)
		}
		if strings.Contains(txt, "LOWER") {
			t.Errorf("%s: table still says LOWER:\n%s", c.bound, txt)
		}
	}
}
