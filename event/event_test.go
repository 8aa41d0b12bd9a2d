package event

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/shuffledp/shuffledp/accounting"
)

func TestValidate(t *testing.T) {
	for _, c := range []struct {
		e    Event
		flag string // "" = valid
	}{
		{Event{Mechanism: SubsampledShuffle, N: 60000, K: 10000, Eps0: 1.5}, ""},
		{Event{Mechanism: SubsampledShuffle, N: 1, K: 1}, ""}, // eps0 = 0: perfectly private reports
		{Event{Mechanism: Shuffle, N: 1000, Eps0: 2}, ""},
		{Event{Mechanism: Shuffle, N: 1000, K: 1000, Eps0: 2}, ""},
		{Event{Mechanism: ShuffleGaussian, N: 60000, Sigma: 9.48}, ""},
		{Event{Mechanism: ShuffleGaussian, N: 60000, K: 60000, Sigma: 9.48}, ""},
		{Event{Mechanism: SubsampledShuffleGaussian, N: 60000, K: 600, Sigma: 2}, ""},
		{Event{Mechanism: CheckinGaussian, N: 60000, Rate: 0.1, Sigma: 5}, ""},
		{Event{Mechanism: CheckinGaussian, N: 60000, Rate: 1, Sigma: 5}, ""},

		{Event{}, "--mechanism"},
		{Event{Mechanism: "laplace", N: 10}, "--mechanism"},
		{Event{Mechanism: Shuffle, N: 0, Eps0: 1}, "--n"},
		{Event{Mechanism: SubsampledShuffle, N: -5, K: 1, Eps0: 1}, "--n"},
		{Event{Mechanism: SubsampledShuffle, N: 10, K: 0, Eps0: 1}, "--k"},
		{Event{Mechanism: SubsampledShuffle, N: 10, K: 11, Eps0: 1}, "--k"},
		{Event{Mechanism: SubsampledShuffle, N: 10, K: 5, Eps0: -1}, "--eps0"},
		{Event{Mechanism: SubsampledShuffle, N: 10, K: 5, Eps0: math.NaN()}, "--eps0"},
		{Event{Mechanism: Shuffle, N: 10, Eps0: math.Inf(1)}, "--eps0"},
		{Event{Mechanism: Shuffle, N: 10, K: 5, Eps0: 1}, "--k"},
		{Event{Mechanism: Shuffle, N: 10, Eps0: 1, Sigma: 2}, "--sigma"},
		{Event{Mechanism: SubsampledShuffle, N: 10, K: 5, Eps0: 1, Rate: 0.5}, "--rate"},
		{Event{Mechanism: ShuffleGaussian, N: 10}, "--sigma"},
		{Event{Mechanism: ShuffleGaussian, N: 10, Sigma: -1}, "--sigma"},
		{Event{Mechanism: ShuffleGaussian, N: 10, Sigma: math.NaN()}, "--sigma"},
		{Event{Mechanism: ShuffleGaussian, N: 10, Sigma: math.Inf(1)}, "--sigma"},
		{Event{Mechanism: ShuffleGaussian, N: 10, Sigma: 1e-300}, "--sigma"}, // 1/sigma^2 overflows
		{Event{Mechanism: ShuffleGaussian, N: 10, Sigma: MinSigma}, ""},
		{Event{Mechanism: ShuffleGaussian, N: 10, Sigma: 1, Eps0: 1}, "--eps0"},
		{Event{Mechanism: ShuffleGaussian, N: 10, Sigma: 1, K: 3}, "--k"},
		{Event{Mechanism: ShuffleGaussian, N: 10, Sigma: 1, Rate: 0.5}, "--rate"},
		{Event{Mechanism: SubsampledShuffleGaussian, N: 10, Sigma: 1}, "--k"},
		{Event{Mechanism: SubsampledShuffleGaussian, N: 10, K: 20, Sigma: 1}, "--k"},
		{Event{Mechanism: SubsampledShuffleGaussian, N: 10, K: 2, Sigma: 1, Rate: 0.2}, "--rate"},
		{Event{Mechanism: CheckinGaussian, N: 10, Sigma: 1}, "--rate"},
		{Event{Mechanism: CheckinGaussian, N: 10, Sigma: 1, Rate: 1.5}, "--rate"},
		{Event{Mechanism: CheckinGaussian, N: 10, Sigma: 1, Rate: -0.1}, "--rate"},
		{Event{Mechanism: CheckinGaussian, N: 10, Sigma: 1, Rate: math.NaN()}, "--rate"},
		{Event{Mechanism: CheckinGaussian, N: 10, Sigma: 1, Rate: 0.1, K: 2}, "--k"},
	} {
		err := c.e.Validate()
		switch {
		case c.flag == "" && err != nil:
			t.Errorf("%s: %v", c.e, err)
		case c.flag != "" && err == nil:
			t.Errorf("%s: accepted, want an error naming %s", c.e, c.flag)
		case c.flag != "" && !strings.HasPrefix(err.Error(), c.flag):
			t.Errorf("%s: error %q does not start with %s", c.e, err, c.flag)
		}
	}
}

func TestJSONRoundTrip(t *testing.T) {
	for _, c := range []struct {
		e    Event
		json string
	}{
		{Event{Mechanism: SubsampledShuffle, N: 60000, K: 10000, Eps0: 1.5}, `{"mechanism":"subsampled-shuffle","n":60000,"k":10000,"eps0":1.5}`},
		{Event{Mechanism: Shuffle, N: 7}, `{"mechanism":"shuffle","n":7}`},
		{Event{Mechanism: ShuffleGaussian, N: 60000, Sigma: 9.48}, `{"mechanism":"shuffle-gaussian","n":60000,"sigma":9.48}`},
		{Event{Mechanism: SubsampledShuffleGaussian, N: 60000, K: 600, Sigma: math.Nextafter(0.3, 1)}, `{"mechanism":"subsampled-shuffle-gaussian","n":60000,"k":600,"sigma":0.30000000000000004}`},
		{Event{Mechanism: CheckinGaussian, N: 60000, Rate: 0.1, Sigma: 5}, `{"mechanism":"checkin-gaussian","n":60000,"sigma":5,"rate":0.1}`},
	} {
		b, err := json.Marshal(c.e)
		if err != nil || string(b) != c.json {
			t.Errorf("%s: marshal %s (%v), want %s", c.e, b, err, c.json)
		}
		got, err := Parse(b)
		if err != nil || got != c.e {
			t.Errorf("%s: round trip %+v (%v)", c.e, got, err)
		}
		cs := []Composed{{Event: c.e, Count: 3}}
		b, _ = json.Marshal(cs)
		var back []Composed
		if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, cs) {
			t.Errorf("Composed round trip: %s -> %+v (%v)", b, back, err)
		}
	}
	for _, bad := range []string{
		`{"mechanism":"shuffle","n":7,"eps":1}`,                // unknown field
		`{"mechanism":"shuffle","n":7}{"mechanism":"shuffle"}`, // trailing data
		`{"mechanism":"shuffle","n":0}`,                        // invalid
		`{"mechanism":"shuffle","n":7.5}`,                      // not an integer
		`[]`,
	} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("Parse(%s) accepted", bad)
		}
	}
}

func TestString(t *testing.T) {
	for e, want := range map[Event]string{
		{Mechanism: SubsampledShuffle, N: 60000, K: 10000, Eps0: 1.5}:     "subsampled-shuffle(n=60000, k=10000, eps0=1.5)",
		{Mechanism: Shuffle, N: 100, K: 100}:                              "shuffle(n=100, eps0=0)",
		{Mechanism: CheckinGaussian, N: 10, Rate: 0.25, Sigma: 2}:         "checkin-gaussian(n=10, rate=0.25, sigma=2)",
		{Mechanism: SubsampledShuffleGaussian, N: 10, K: 3, Sigma: 0.5}:   "subsampled-shuffle-gaussian(n=10, k=3, sigma=0.5)",
		{Mechanism: ShuffleGaussian, N: 10, Sigma: 1, Eps0: 2, Rate: 0.5}: "shuffle-gaussian(n=10, rate=0.5, eps0=2, sigma=1)",
	} {
		if got := e.String(); got != want {
			t.Errorf("%+v: %q, want %q", e, got, want)
		}
	}
}

// TestBounds: the LDP bounds are accounting's (a bound added there appears
// here), ccs21-lower only where accounting accepts it, lower bounds marked
// as accounting marks them, every bound described, "best" last.
func TestBounds(t *testing.T) {
	for _, e := range []Event{
		{Mechanism: Shuffle, N: 100, Eps0: 1},
		{Mechanism: SubsampledShuffle, N: 100, K: 10, Eps0: 1},
		{Mechanism: ShuffleGaussian, N: 100, Sigma: 2},
		{Mechanism: SubsampledShuffleGaussian, N: 100, K: 10, Sigma: 2},
		{Mechanism: CheckinGaussian, N: 100, Rate: 0.1, Sigma: 2},
	} {
		bs := e.Bounds()
		if len(bs) < 2 || bs[len(bs)-1].Name != accounting.BoundBest {
			t.Errorf("%s: bounds %v, want best last", e, bs)
		}
		for _, b := range bs {
			if b.Description == "" {
				t.Errorf("%s: bound %s has no description", e, b.Name)
			}
			c, err := e.Curve(b.Name)
			if err != nil {
				t.Errorf("%s: Curve(%s): %v", e, b.Name, err)
				continue
			}
			if accounting.IsLower(c) != b.Lower {
				t.Errorf("%s: %s: Lower %v, curve says %v", e, b.Name, b.Lower, accounting.IsLower(c))
			}
		}
		if !IsLDP(e.Mechanism) {
			continue
		}
		var want []string
		for _, name := range accounting.BoundNames() {
			if _, err := accounting.NewBound(e.Mechanism, name, e.N, e.reports(), e.Eps0); err == nil {
				want = append(want, name)
			}
		}
		if got := e.boundNames(); !slices.Equal(got, want) {
			t.Errorf("%s: bounds %v, accounting constructs %v", e, got, want)
		}
	}
	if (Event{Mechanism: "nope"}).Bounds() != nil {
		t.Error("bounds of an unknown mechanism")
	}
}

func TestCurveErrors(t *testing.T) {
	e := Event{Mechanism: ShuffleGaussian, N: 100, Sigma: 2}
	_, err := e.Curve(accounting.BoundNeurIPS21Upper)
	var ub *UnknownBoundError
	if !errors.As(err, &ub) || !slices.Equal(ub.Valid, []string{BoundGaussianCor1, BoundICLR23Thm1, BoundBestConjecture, accounting.BoundBest}) ||
		!strings.Contains(err.Error(), "--bound") {
		t.Errorf("Gaussian event, LDP bound: %v", err)
	}
	l := Event{Mechanism: SubsampledShuffle, N: 100, K: 10, Eps0: 1}
	_, err = l.Curve(BoundICLR23Thm1)
	if !errors.As(err, &ub) || !slices.Contains(ub.Valid, accounting.BoundClonesRDP) {
		t.Errorf("LDP event, Gaussian bound: %v", err)
	}
	if _, err := l.Curve(accounting.BoundCCS21Lower); err == nil {
		t.Error("ccs21-lower accepted for k < n")
	}
	if _, err := (Event{Mechanism: Shuffle, N: 0}).Curve(""); err == nil || !strings.HasPrefix(err.Error(), "--n") {
		t.Errorf("invalid event: %v", err)
	}
	c, err := l.Curve("")
	if err != nil || c.Name() != accounting.BoundBest {
		t.Errorf(`Curve(""): %v, %v; want best`, c, err)
	}
}

// TestEpsilonLDPMatchesAccountant: for the LDP mechanisms Epsilon is the
// accounting.Accountant on accounting.NewBound's curve, on the default grid
// unless orders are given.
func TestEpsilonLDPMatchesAccountant(t *testing.T) {
	for _, c := range []struct {
		e      Event
		bound  string
		steps  int64
		delta  float64
		orders []float64
	}{
		{Event{Mechanism: SubsampledShuffle, N: 60000, K: 600, Eps0: 1}, "best", 100, 1.0 / 60000, nil},
		{Event{Mechanism: SubsampledShuffle, N: 1000000, K: 1000, Eps0: 2}, accounting.BoundNeurIPS21Upper, 100000, 1e-8, []float64{2, 10, 28, 50}},
		{Event{Mechanism: Shuffle, N: 2000, Eps0: 1}, accounting.BoundCCS21Upper1, 1, 1e-6, nil},
		{Event{Mechanism: Shuffle, N: 2000, Eps0: 1}, accounting.BoundCCS21Lower, 10, 1e-6, nil},
	} {
		curve, err := accounting.NewBound(c.e.Mechanism, c.bound, c.e.N, c.e.reports(), c.e.Eps0)
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
		res, err := Account([]Composed{{Event: c.e, Count: c.steps}}, c.bound, c.delta, c.orders)
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
	e := Event{Mechanism: ShuffleGaussian, N: 60000, Sigma: 2 * 9.48, Adjacency: AdjacencyReplaceOne}
	zo := Event{Mechanism: ShuffleGaussian, N: 60000, Sigma: 9.48, Adjacency: AdjacencyZeroOut}
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
			res, err := Account([]Composed{{Event: e, Count: w.Steps}}, BoundICLR23Thm1, 1.0/60000, set.orders)
			if err != nil || res.Epsilon < want || res.Epsilon > want+1e-10 || res.Order != w.Order {
				t.Errorf("T=%d orders %v: %+v (%v), mpmath %.15g at %g", w.Steps, set.orders != nil, res, err, want, w.Order)
			}
			if !res.Conjecture || res.Assumption != Assumption {
				t.Errorf("T=%d: conjecture %v, assumption %q", w.Steps, res.Conjecture, res.Assumption)
			}
			z, err := Account([]Composed{{Event: zo, Count: w.Steps}}, BoundICLR23Thm1, 1.0/60000, set.orders)
			if err != nil || !(z.Epsilon > want) || !z.Conjecture {
				t.Errorf("T=%d zero-out at sigma: %+v (%v): want the curve at sigma/2, above the paper's %.6g", w.Steps, z, err, want)
			}
			b, err := Best([]Composed{{Event: zo, Count: w.Steps}}, 1.0/60000, set.orders)
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
	a := Event{Mechanism: SubsampledShuffle, N: 60000, K: 600, Eps0: 1}
	b := Event{Mechanism: SubsampledShuffleGaussian, N: 60000, K: 600, Sigma: 1}
	delta := 1e-5
	eps := func(cs ...Composed) float64 {
		t.Helper()
		g, err := Epsilon(cs, "best", delta, []float64{2, 4, 8, 16, 32, 64})
		if err != nil {
			t.Fatal(err)
		}
		return g.Epsilon
	}
	if x, y := eps(Composed{a, 30}, Composed{a, 70}), eps(Composed{a, 100}); math.Abs(x-y) > 1e-12*y {
		t.Errorf("30+70 rounds: %.15g, 100 rounds: %.15g", x, y)
	}
	both, onlyA, onlyB := eps(Composed{a, 50}, Composed{b, 50}), eps(Composed{a, 50}), eps(Composed{b, 50})
	if !(both >= onlyA && both >= onlyB && both <= onlyA+onlyB+math.Log(1/delta)) {
		t.Errorf("mixed %g, alone %g and %g", both, onlyA, onlyB)
	}
	if x := eps(Composed{a, 0}, Composed{b, 0}); x != 0 {
		t.Errorf("no rounds: %g", x)
	}
	if x := eps(); x != 0 {
		t.Errorf("no events: %g", x)
	}
	res, err := Account([]Composed{{a, 10}, {b, 10}}, "best", delta, nil)
	if err != nil || res.Assumption != "" || res.Conjecture || !strings.Contains(res.Winner, ",") {
		t.Errorf("mixed default grid: %+v (%v)", res, err)
	}
	res, err = Account([]Composed{{a, 10}, {b, 10}}, BoundBestConjecture, delta, nil)
	if err != nil || res.Assumption != Assumption || !res.Conjecture || !strings.Contains(res.Winner, BoundICLR23Thm2) {
		t.Errorf("mixed default grid, best-conjecture: %+v (%v)", res, err)
	}
}

func TestEpsilonErrors(t *testing.T) {
	e := Event{Mechanism: Shuffle, N: 100, Eps0: 1}
	for _, c := range []struct {
		events []Composed
		bound  string
		delta  float64
		orders []float64
		want   string
	}{
		{[]Composed{{e, 1}}, "best", 0, nil, "--delta"},
		{[]Composed{{e, 1}}, "best", 1, nil, "--delta"},
		{[]Composed{{e, 1}}, "best", math.NaN(), nil, "--delta"},
		{[]Composed{{e, -1}}, "best", 1e-5, nil, "--steps"},
		{[]Composed{{e, math.MaxInt64}, {e, 1}}, "best", 1e-5, nil, "--steps"},
		{[]Composed{{Event{Mechanism: Shuffle}, 1}}, "best", 1e-5, nil, "--n"},
		{[]Composed{{e, 1}}, "nope", 1e-5, nil, "--bound"},
		{[]Composed{{e, 1}}, "best", 1e-5, []float64{0.5}, "order"},
		// Epsilon is a guarantee: lower bounds only through Account.
		{[]Composed{{e, 1}}, accounting.BoundCCS21Lower, 1e-5, nil, "lower bound"},
		// A lower bound cannot be composed with an upper bound.
		{[]Composed{{e, 1}, {Event{Mechanism: ShuffleGaussian, N: 100, Sigma: 1}, 1}}, accounting.BoundCCS21Lower, 1e-5, nil, "--bound"},
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
	ldp := Event{Mechanism: SubsampledShuffle, N: 10, K: 1, Eps0: 1}
	if !slices.Equal(ldp.DefaultOrders(), accounting.DefaultOrders()) {
		t.Error("LDP default grid is not accounting.DefaultOrders")
	}
	sg := Event{Mechanism: ShuffleGaussian, N: 10, Sigma: 1}.DefaultOrders()
	if sg[len(sg)-1] != 4096 || !slices.Contains(sg, 1977) || !slices.IsSorted(sg) {
		t.Errorf("shuffle-gaussian grid ends at %g", sg[len(sg)-1])
	}
	sub := Event{Mechanism: SubsampledShuffleGaussian, N: 60000, K: 30000, Sigma: 9.48}
	if o := sub.DefaultOrders(); o[len(o)-1] != 256 {
		t.Errorf("subsampled grid ends at %g", o[len(o)-1])
	}
	ev := []Composed{{sub, 1}}
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
	events := []Composed{
		{Event{Mechanism: SubsampledShuffle, N: 60000, K: 600, Eps0: 1}, 40},
		{Event{Mechanism: SubsampledShuffleGaussian, N: 60000, K: 600, Sigma: 2}, 60},
	}
	want, err := Account(events, "", 1e-5, nil)
	if err != nil {
		t.Fatal(err)
	}
	curves := make([]accounting.RDP, len(events))
	for i, c := range events {
		best, err := c.Event.Curve("")
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

func (w wrapped) Name() string                       { return w.b.Name() }
func (w wrapped) RDP(order float64) (float64, error) { return w.b.RDP(order) }
func (w wrapped) RDPWinner(order float64) (float64, string, error) {
	return w.b.RDPWinner(order)
}
