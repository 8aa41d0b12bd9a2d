package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/shuffledp/shuffledp/account"
	"github.com/shuffledp/shuffledp/accounting"
	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/route"
)

// TestAccountMatchesEvent: `account --json` reports, for flags describing
// an event, what route.Account reports for that event composed --steps
// times (the JSON contract: epsilon, delta, order, bound, winning_bound,
// adjacency); a Gaussian event under its default adjacency (replace-one)
// and under --adjacency zero-out.
func TestAccountMatchesEvent(t *testing.T) {
	type accountCase struct {
		args   []string
		e      event.Event
		steps  int64
		bound  string
		delta  float64
		orders []float64
	}
	var cases []accountCase
	for _, c := range []accountCase{
		{[]string{"--n", "60000", "--k", "600", "--eps0", "1", "--steps", "100", "--delta", "1/60000"},
			event.Event{Mechanism: event.SubsampledShuffle, N: 60000, K: 600, Eps0: 1}, 100, "best", 1.0 / 60000, nil},
		{[]string{"--mechanism", "shuffle", "--n", "2000", "--eps0", "0.5", "--steps", "3", "--delta", "1e-6", "--bound", "ccs21-upper2"},
			event.Event{Mechanism: event.Shuffle, N: 2000, Eps0: 0.5}, 3, accounting.BoundCCS21Upper2, 1e-6, nil},
		{[]string{"--mechanism", "shuffle-gaussian", "--n", "1000", "--sigma", "3", "--steps", "10", "--delta", "1e-6", "--orders", "2:64"},
			event.Event{Mechanism: event.ShuffleGaussian, N: 1000, Sigma: 3}, 10, "best", 1e-6, accountTestGrid(2, 64)},
		{[]string{"--mechanism", "subsampled-shuffle-gaussian", "--n", "60000", "--k", "600", "--sigma", "2", "--steps", "100", "--delta", "1e-5"},
			event.Event{Mechanism: event.SubsampledShuffleGaussian, N: 60000, K: 600, Sigma: 2}, 100, "best", 1e-5, nil},
		{[]string{"--mechanism", "checkin-gaussian", "--n", "60000", "--rate", "0.1", "--sigma", "5", "--steps", "100", "--delta", "1e-5", "--bound", "iclr23-eq13"},
			event.Event{Mechanism: event.CheckinGaussian, N: 60000, Rate: 0.1, Sigma: 5}, 100, route.BoundICLR23Eq13, 1e-5, nil},
	} {
		if c.e.Sigma == 0 {
			cases = append(cases, c)
			continue
		}
		ro, zo := c, c
		ro.e.Adjacency = event.AdjacencyReplaceOne
		zo.e.Adjacency = event.AdjacencyZeroOut
		zo.args = append(slices.Clone(c.args), "--adjacency", "zero-out")
		cases = append(cases, ro, zo)
	}
	for _, c := range cases {
		out, err := runAccount(t, append(c.args, "--json")...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", c.args, err, out)
		}
		var got account.Row
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("%v: %v\n%s", c.args, err, out)
		}
		var adj struct{ Adjacency string }
		if err := json.Unmarshal([]byte(out), &adj); err != nil {
			t.Fatal(err)
		}
		want, err := route.Account([]event.Composed{{Event: c.e, Count: c.steps}}, c.bound, c.delta, c.orders)
		if err != nil {
			t.Fatal(err)
		}
		if c.bound == accounting.BoundBest {
			// account's best compares every route (route.Best).
			b, err := route.Best([]event.Composed{{Event: c.e, Count: c.steps}}, c.delta, c.orders)
			if err != nil {
				t.Fatal(err)
			}
			if got.Epsilon != b.Epsilon || got.Winner != b.Winner || got.Epsilon > want.Epsilon {
				t.Errorf("%v: account best %+v, route.Best %+v", c.args, got, b.Result)
			}
			continue
		}
		if got.Bound != c.bound || got.Epsilon != want.Epsilon || got.Delta != want.Delta || got.Order != want.Order ||
			got.Winner != want.Winner || got.Lower != want.Lower || got.Conversion != want.Conversion ||
			adj.Adjacency != want.Adjacency || want.Adjacency != c.e.EffectiveAdjacency() {
			t.Errorf("%v: account %+v (adjacency %q), event %+v", c.args, got, adj.Adjacency, want)
		}
		g, err := route.Epsilon([]event.Composed{{Event: c.e, Count: c.steps}}, c.bound, c.delta, c.orders)
		if err != nil || g != want.Guarantee {
			t.Errorf("%v: Epsilon %+v (%v), Account %+v", c.args, g, err, want.Guarantee)
		}
	}
}

func accountTestGrid(lo, hi int) []float64 {
	var o []float64
	for i := lo; i <= hi; i++ {
		o = append(o, float64(i))
	}
	return o
}

// TestAccountEps0OutOfRange: the default table at --eps0 1000
// used to fail on neurips21-lower; it now shows the usable rows and says
// which bounds it skipped and why.
func TestAccountEps0OutOfRange(t *testing.T) {
	out, err := runAccount(t, "--eps0", "1000")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, s := range []string{"best ", "clones-rdp ", "note: neurips21-lower skipped for subsampled-shuffle(n=1000000, k=1000, eps0=1000)"} {
		if !strings.Contains(out, s) {
			t.Errorf("table lacks %q:\n%s", s, out)
		}
	}
	out, err = runAccount(t, "--eps0", "1000", "--bound", "all", "--json")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var v struct {
		Bound    string
		Epsilon  float64
		All      []account.Row
		Warnings []string
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	if v.Bound != "best" || !(v.Epsilon > 0) || len(v.All) < 3 || !slices.ContainsFunc(v.Warnings, func(w string) bool {
		return strings.HasPrefix(w, "neurips21-lower skipped")
	}) {
		t.Errorf("--json --bound all at eps0=1000: %+v", v)
	}
	// One bound that cannot be evaluated is an error naming the parameters.
	if _, err := runAccount(t, "--eps0", "1000", "--bound", "neurips21-lower"); err == nil || !strings.Contains(err.Error(), "eps0=1000") {
		t.Errorf("--bound neurips21-lower at eps0=1000: %v", err)
	}
}

// TestAccountBoundErrorListsEveryName: the error for an unknown
// --bound lists exactly the names that work for the mechanism: every
// candidate (accounting's bounds, the Gaussian bounds, the approximate-DP
// baselines, "all") that account accepts is listed, and every listed name
// is accepted.
func TestAccountBoundErrorListsEveryName(t *testing.T) {
	candidates := append(accounting.BoundNames(), route.BoundICLR23Thm1, route.BoundICLR23Thm2,
		route.BoundICLR23Eq11, route.BoundICLR23Eq13, route.BoundGaussianCor1, route.BoundWBK19Cor1, route.BoundCheckinSlot,
		route.BoundBestConjecture, route.BoundPLD, account.BoundRDPBest, account.BoundBestNoPLD, "all")
	candidates = append(candidates, account.Baselines()...)
	for _, mech := range [][]string{
		{"--mechanism", "subsampled-shuffle", "--n", "100", "--k", "10", "--eps0", "1"},
		{"--mechanism", "shuffle", "--n", "100", "--eps0", "1"},
		{"--mechanism", "shuffle-gaussian", "--n", "100", "--sigma", "2"},
		{"--mechanism", "subsampled-shuffle-gaussian", "--n", "100", "--k", "10", "--sigma", "2"},
		{"--mechanism", "checkin-gaussian", "--n", "100", "--rate", "0.1", "--sigma", "2"},
	} {
		base := append(mech, "--steps", "1", "--delta", "1e-5", "--orders", "2:8")
		_, err := runAccount(t, append(base, "--bound", "nope")...)
		if err == nil {
			t.Fatalf("%v --bound nope accepted", mech)
		}
		_, list, ok := strings.Cut(err.Error(), "use one of ")
		if !ok || !strings.Contains(err.Error(), "--bound") {
			t.Fatalf("%v: %v", mech, err)
		}
		listed := strings.Split(list, ", ")
		for _, b := range candidates {
			_, err := runAccount(t, append(base, "--bound", b, "--json")...)
			if in := slices.Contains(listed, b); in != (err == nil) {
				t.Errorf("%v --bound %s: listed %v, error %v", mech[1], b, in, err)
			}
		}
	}
}
