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

// TestAccountBestNamesTheWinningRoute: --bound best is the minimum over
// every route and names the winner, in the JSON (winning_bound, routes) and
// in the table. One shuffle of 100,000 reports at eps0 = 4, delta = 1e-6:
// the FMT20 numerical row says 0.16977, which best must not exceed.
func TestAccountBestNamesTheWinningRoute(t *testing.T) {
	args := []string{"--mechanism", "shuffle", "--n", "1e5", "--eps0", "4", "--steps", "1", "--delta", "1e-6"}
	out, err := runAccount(t, append(args, "--bound", "best", "--json")...)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var v struct {
		Epsilon float64 `json:"epsilon"`
		Winner  string  `json:"winning_bound"`
		Routes  []struct {
			Route   string  `json:"route"`
			Bound   string  `json:"bound"`
			Epsilon float64 `json:"epsilon"`
		} `json:"routes"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	if v.Epsilon > 0.170 {
		t.Errorf("best %.6g > 0.170 (the fmt20-numeric row)", v.Epsilon)
	}
	routes := map[string]bool{}
	for _, r := range v.Routes {
		routes[r.Route] = true
		if v.Epsilon > r.Epsilon {
			t.Errorf("best %.9g above route %s (%s) %.9g", v.Epsilon, r.Route, r.Bound, r.Epsilon)
		}
		if r.Epsilon == v.Epsilon && r.Bound != v.Winner {
			t.Errorf("winner %q, but route %s attaining it is %q", v.Winner, r.Route, r.Bound)
		}
	}
	if !routes["rdp"] || !routes["approx-dp"] || !routes["pld"] {
		t.Errorf("routes %v, want rdp, approx-dp and pld", routes)
	}
	txt, err := runAccount(t, append(args, "--bound", "best")...)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(txt, "won by "+v.Winner) {
		t.Errorf("table does not name the winner %q:\n%s", v.Winner, txt)
	}
}

// TestAccountPLD: --bound pld for the LDP mechanisms, sampled-gaussian and
// the shuffle Gaussian mechanisms, its optimistic end below the guarantee.
// The shuffle Gaussian one (the Gaussian pair at sigma/2 under replace-one,
// docs/proofs/shuffle-gaussian.md) at sigma 3, 10 rounds, delta 1e-5: the
// Gaussian mechanism of sensitivity 1 at noise 1.5 composed 10 times, whose
// exact epsilon (Balle & Wang's profile with mu = sqrt(10)/1.5, by mpmath bisection) is 10.669523.
func TestAccountPLD(t *testing.T) {
	out, err := runAccount(t, "--bound", "pld", "--n", "1e5", "--k", "1e3", "--eps0", "3", "--steps", "10", "--delta", "1e-5", "--json")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var v struct {
		Epsilon float64 `json:"epsilon"`
		Opt     float64 `json:"pld_optimistic"`
		Kind    string  `json:"kind"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	// pld's own example: 0.0262 (ExampleCloneShuffle).
	if v.Kind != accounting.KindUpper || !(v.Opt <= v.Epsilon) || v.Epsilon < 0.0262 || v.Epsilon > 0.02625 {
		t.Errorf("pld: %+v", v)
	}
	out, err = runAccount(t, "--bound", "pld", "--mechanism", "shuffle-gaussian", "--n", "100", "--sigma", "3", "--steps", "10", "--delta", "1e-5", "--json")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	v.Epsilon, v.Opt = 0, 0
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	if v.Kind != accounting.KindUpper || !(v.Opt <= v.Epsilon) || v.Epsilon < 10.669523 || v.Epsilon > 10.672 || v.Opt > 10.669523 {
		t.Errorf("shuffle-gaussian pld: %+v, want the Gaussian mechanism's 10.669523 inside [optimistic, epsilon]", v)
	}
}

// TestAccountCertifiedInterval: --bound certified prints [lower, upper] and
// the ratio; at n = k = 1, eps0 = 0.5, one round, delta = 1e-5 the lower end
// is at most the exact 0.49998 of randomized response (where the converted
// krr3-lower says 0.5004) and the upper end at least it.
func TestAccountCertifiedInterval(t *testing.T) {
	args := []string{"--bound", "certified", "--n", "1", "--k", "1", "--eps0", "0.5", "--steps", "1", "--delta", "1e-5"}
	out, err := runAccount(t, append(args, "--json")...)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var v struct {
		Kind     string    `json:"kind"`
		Epsilon  float64   `json:"epsilon"`
		Interval []float64 `json:"interval"`
		Ratio    float64   `json:"ratio"`
		Witness  string    `json:"witness"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	exact := 0.4999839 // log((q - 1e-5)/(1-q)), q = e^0.5/(1+e^0.5)
	if v.Kind != accounting.KindCertifiedLower || len(v.Interval) != 2 || v.Epsilon != v.Interval[0] ||
		v.Interval[0] > exact || v.Interval[0] < 0.4999 || v.Interval[1] < exact || v.Ratio < 1 || v.Witness == "" {
		t.Errorf("certified: %+v", v)
	}
	txt, err := runAccount(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(txt, "certified-lower") || !strings.Contains(txt, "ratio") || !strings.Contains(txt, "[0.4999") {
		t.Errorf("table:\n%s", txt)
	}
}
