package route

import (
	"encoding/json"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/shuffledp/shuffledp/accounting"
	"github.com/shuffledp/shuffledp/event"
)

// TestEpsilonLDPMatchesAccountant: for the LDP mechanisms Epsilon is the
// accounting.Accountant on accounting.NewBound's curve, on the default grid
// unless orders are given.
func TestEpsilonLDPMatchesAccountant(t *testing.T) {
	for _, c := range []struct {
		e      event.Event
		bound  string
		steps  int64
		delta  float64
		orders []float64
	}{
		{event.Event{Mechanism: event.SubsampledShuffle, N: 60000, K: 600, Eps0: 1}, "best", 100, 1.0 / 60000, nil},
		{event.Event{Mechanism: event.SubsampledShuffle, N: 1000000, K: 1000, Eps0: 2}, accounting.BoundNeurIPS21Upper, 100000, 1e-8, []float64{2, 10, 28, 50}},
		{event.Event{Mechanism: event.Shuffle, N: 2000, Eps0: 1}, accounting.BoundCCS21Upper1, 1, 1e-6, nil},
		{event.Event{Mechanism: event.Shuffle, N: 2000, Eps0: 1}, accounting.BoundCCS21Lower, 10, 1e-6, nil},
	} {
		curve, err := accounting.NewBound(c.e.Mechanism, c.bound, c.e.N, c.e.Reports(), c.e.Eps0)
		if err != nil {
			t.Fatal(err)
		}
		acct, _ := accounting.NewAccountant(c.orders)
		if err := acct.Compose64(curve, c.steps); err != nil {
			t.Fatal(err)
		}
		want, err := acct.Epsilon(c.delta)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Account([]event.Composed{{Event: c.e, Count: c.steps}}, c.bound, c.delta, c.orders)
		if err != nil || res.Guarantee != want || res.Lower != accounting.IsLower(curve) || res.Rounds != c.steps {
			t.Errorf("%s %s: %+v (%v), accountant %+v", c.e, c.bound, res, err, want)
		}
		if b, ok := curve.(*accounting.BestCurve); ok {
			if _, w, _ := b.RDPWinner(want.Order); res.Winner != w {
				t.Errorf("%s: winner %q, want %q", c.e, res.Winner, w)
			}
		}
	}
}

// TestEpsilonTable1: the conjecture iclr23-thm1 at the ICLR'23
// submission's Table 1 setting against the mpmath oracle of package
// shufflegauss (never below it, at most 1e-10 above), capped at orders
// 2..30 and on the default grid, labelled a conjecture. The conjecture is
// evaluated at sigma/2 (replace-one), so the paper's sigma = 9.48 is asked
// for as 18.96 under replace-one; at 9.48 under zero-out (the paper's own
// reading, refuted) it is the curve at 4.74, larger. "best" there is proven
// and above the conjecture.
func TestEpsilonTable1(t *testing.T) {
	b, err := os.ReadFile("../shufflegauss/testdata/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	type entry struct {
		Steps   int64   `json:"steps"`
		Epsilon string  `json:"epsilon"`
		Order   float64 `json:"order"`
	}
	var g struct{ Table1, Table1Uncapped []entry }
	g2 := struct {
		Table1         *[]entry `json:"table1"`
		Table1Uncapped *[]entry `json:"table1_uncapped"`
	}{&g.Table1, &g.Table1Uncapped}
	if err := json.Unmarshal(b, &g2); err != nil {
		t.Fatal(err)
	}
	e := event.Event{Mechanism: event.ShuffleGaussian, N: 60000, Sigma: 2 * 9.48, Adjacency: event.AdjacencyReplaceOne}
	zo := event.Event{Mechanism: event.ShuffleGaussian, N: 60000, Sigma: 9.48, Adjacency: event.AdjacencyZeroOut}
	var capped []float64
	for o := 2; o <= 30; o++ {
		capped = append(capped, float64(o))
	}
	for _, set := range []struct {
		entries []entry
		orders  []float64
	}{{g.Table1, capped}, {g.Table1Uncapped, nil}} {
		if len(set.entries) == 0 {
			t.Fatal("no golden entries")
		}
		for _, w := range set.entries {
			want, _ := strconv.ParseFloat(w.Epsilon, 64)
			res, err := Account([]event.Composed{{Event: e, Count: w.Steps}}, BoundICLR23Thm1, 1.0/60000, set.orders)
			if err != nil || res.Epsilon < want || res.Epsilon > want+1e-10 || res.Order != w.Order {
				t.Errorf("T=%d orders %v: %+v (%v), mpmath %.15g at %g", w.Steps, set.orders != nil, res, err, want, w.Order)
			}
			if !res.Conjecture || res.Assumption != Assumption {
				t.Errorf("T=%d: conjecture %v, assumption %q", w.Steps, res.Conjecture, res.Assumption)
			}
			z, err := Account([]event.Composed{{Event: zo, Count: w.Steps}}, BoundICLR23Thm1, 1.0/60000, set.orders)
			if err != nil || !(z.Epsilon > want) || !z.Conjecture {
				t.Errorf("T=%d zero-out at sigma: %+v (%v): want the curve at sigma/2, above the paper's %.6g", w.Steps, z, err, want)
			}
			b, err := Best([]event.Composed{{Event: zo, Count: w.Steps}}, 1.0/60000, set.orders)
			if err != nil || b.Conjecture || b.Assumption != "" || !(b.Epsilon > want) {
				t.Errorf("T=%d best zero-out: %+v (%v): want proven, above the conjecture %.6g", w.Steps, b, err, want)
			}
		}
	}
}

// TestEpsilonComposition: rounds compose additively: split counts give the
// same epsilon as their sum; two mechanisms cost at least either alone;
// no rounds cost nothing.
func TestEpsilonComposition(t *testing.T) {
	a := event.Event{Mechanism: event.SubsampledShuffle, N: 60000, K: 600, Eps0: 1}
	b := event.Event{Mechanism: event.SubsampledShuffleGaussian, N: 60000, K: 600, Sigma: 1}
	delta := 1e-5
	eps := func(cs ...event.Composed) float64 {
		t.Helper()
		g, err := Epsilon(cs, "best", delta, []float64{2, 4, 8, 16, 32, 64})
		if err != nil {
			t.Fatal(err)
		}
		return g.Epsilon
	}
	if x, y := eps(event.Composed{Event: a, Count: 30}, event.Composed{Event: a, Count: 70}), eps(event.Composed{Event: a, Count: 100}); math.Abs(x-y) > 1e-12*y {
		t.Errorf("30+70 rounds: %.15g, 100 rounds: %.15g", x, y)
	}
	both, onlyA, onlyB := eps(event.Composed{Event: a, Count: 50}, event.Composed{Event: b, Count: 50}), eps(event.Composed{Event: a, Count: 50}), eps(event.Composed{Event: b, Count: 50})
	if !(both >= onlyA && both >= onlyB && both <= onlyA+onlyB+math.Log(1/delta)) {
		t.Errorf("mixed %g, alone %g and %g", both, onlyA, onlyB)
	}
	if x := eps(event.Composed{Event: a, Count: 0}, event.Composed{Event: b, Count: 0}); x != 0 {
		t.Errorf("no rounds: %g", x)
	}
	if x := eps(); x != 0 {
		t.Errorf("no events: %g", x)
	}
	res, err := Account([]event.Composed{{Event: a, Count: 10}, {Event: b, Count: 10}}, "best", delta, nil)
	if err != nil || res.Assumption != "" || res.Conjecture || !strings.Contains(res.Winner, ",") {
		t.Errorf("mixed default grid: %+v (%v)", res, err)
	}
	res, err = Account([]event.Composed{{Event: a, Count: 10}, {Event: b, Count: 10}}, BoundBestConjecture, delta, nil)
	if err != nil || res.Assumption != Assumption || !res.Conjecture || !strings.Contains(res.Winner, BoundICLR23Thm2) {
		t.Errorf("mixed default grid, best-conjecture: %+v (%v)", res, err)
	}
}

func TestEpsilonErrors(t *testing.T) {
	e := event.Event{Mechanism: event.Shuffle, N: 100, Eps0: 1}
	for _, c := range []struct {
		events []event.Composed
		bound  string
		delta  float64
		orders []float64
		want   string
	}{
		{[]event.Composed{{Event: e, Count: 1}}, "best", 0, nil, "--delta"},
		{[]event.Composed{{Event: e, Count: 1}}, "best", 1, nil, "--delta"},
		{[]event.Composed{{Event: e, Count: 1}}, "best", math.NaN(), nil, "--delta"},
		{[]event.Composed{{Event: e, Count: -1}}, "best", 1e-5, nil, "--steps"},
		{[]event.Composed{{Event: e, Count: math.MaxInt64}, {Event: e, Count: 1}}, "best", 1e-5, nil, "--steps"},
		{[]event.Composed{{Event: event.Event{Mechanism: event.Shuffle}, Count: 1}}, "best", 1e-5, nil, "--n"},
		{[]event.Composed{{Event: e, Count: 1}}, "nope", 1e-5, nil, "--bound"},
		{[]event.Composed{{Event: e, Count: 1}}, "best", 1e-5, []float64{0.5}, "order"},
		// Epsilon is a guarantee: lower bounds only through Account.
		{[]event.Composed{{Event: e, Count: 1}}, accounting.BoundCCS21Lower, 1e-5, nil, "lower bound"},
		// A lower bound cannot be composed with an upper bound.
		{[]event.Composed{{Event: e, Count: 1}, {Event: event.Event{Mechanism: event.ShuffleGaussian, N: 100, Sigma: 1}, Count: 1}}, accounting.BoundCCS21Lower, 1e-5, nil, "--bound"},
	} {
		g, err := Epsilon(c.events, c.bound, c.delta, c.orders)
		if err == nil || !strings.Contains(err.Error(), c.want) || g != (accounting.Guarantee{}) {
			t.Errorf("%+v %s %g: %+v, %v; want an error naming %s", c.events, c.bound, c.delta, g, err, c.want)
		}
	}
}

// TestDefaultOrders: the grids account uses; the adaptive ones widen when
// the optimum is at their edge (same answer as every integer to 4096).
func TestDefaultOrders(t *testing.T) {
	ldp := event.Event{Mechanism: event.SubsampledShuffle, N: 10, K: 1, Eps0: 1}
	if !slices.Equal(DefaultOrders(ldp), accounting.DefaultOrders()) {
		t.Error("LDP default grid is not accounting.DefaultOrders")
	}
	sg := DefaultOrders(event.Event{Mechanism: event.ShuffleGaussian, N: 10, Sigma: 1})
	if sg[len(sg)-1] != 4096 || !slices.Contains(sg, 1977) || !slices.IsSorted(sg) {
		t.Errorf("shuffle-gaussian grid ends at %g", sg[len(sg)-1])
	}
	sub := event.Event{Mechanism: event.SubsampledShuffleGaussian, N: 60000, K: 30000, Sigma: 9.48}
	if o := DefaultOrders(sub); o[len(o)-1] != 256 {
		t.Errorf("subsampled grid ends at %g", o[len(o)-1])
	}
	ev := []event.Composed{{Event: sub, Count: 1}}
	def, err := Epsilon(ev, BoundICLR23Thm2, 1e-5, nil)
	if err != nil {
		t.Fatal(err)
	}
	full, err := Epsilon(ev, BoundICLR23Thm2, 1e-5, gaussianOrders(4096))
	if err != nil {
		t.Fatal(err)
	}
	if def.Order <= 256 || def != full {
		t.Errorf("widened default %+v, full grid %+v", def, full)
	}
}

// TestAccountCurves: over the curves Account would build, AccountCurves
// gives Account's result; without explain, the same guarantee and no
// winner; a wrapped best curve still names its winner through RDPWinner.
func TestAccountCurves(t *testing.T) {
	events := []event.Composed{
		{Event: event.Event{Mechanism: event.SubsampledShuffle, N: 60000, K: 600, Eps0: 1}, Count: 40},
		{Event: event.Event{Mechanism: event.SubsampledShuffleGaussian, N: 60000, K: 600, Sigma: 2}, Count: 60},
	}
	want, err := Account(events, "", 1e-5, nil)
	if err != nil {
		t.Fatal(err)
	}
	curves := make([]accounting.RDP, len(events))
	for i, c := range events {
		best, err := Curve(c.Event, "")
		if err != nil {
			t.Fatal(err)
		}
		curves[i] = wrapped{best.(*accounting.BestCurve)}
	}
	got, err := AccountCurves(events, curves, "", 1e-5, nil, true)
	if err != nil || got != want || got.Winner == "" {
		t.Errorf("AccountCurves %+v (%v), Account %+v", got, err, want)
	}
	quiet, err := AccountCurves(events, curves, "", 1e-5, nil, false)
	if err != nil || quiet.Guarantee != want.Guarantee || quiet.Winner != "" || quiet.Assumption != "" {
		t.Errorf("without explain: %+v (%v)", quiet, err)
	}
	if _, err := AccountCurves(events, curves[:1], "", 1e-5, nil, true); err == nil {
		t.Error("one curve for two events accepted")
	}
}

// wrapped hides the concrete type of a best curve, as a memoising ledger
// would.
type wrapped struct{ b *accounting.BestCurve }

func (w wrapped) Name() string { return w.b.Name() }

func (w wrapped) RDP(order float64) (float64, error) { return w.b.RDP(order) }

func (w wrapped) RDPWinner(order float64) (float64, string, error) {
	return w.b.RDPWinner(order)
}
