package route

import (
	"fmt"
	"math"
	"slices"

	"github.com/shuffledp/shuffledp/accounting"
	"github.com/shuffledp/shuffledp/approxdp"
	"github.com/shuffledp/shuffledp/event"
)

// Routes of Best: the ways to an (epsilon, delta) upper bound it compares.
const (
	// RouteRDP: the RDP bound "best" of every event (at every order the
	// smallest valid RDP upper bound), composed over the events by adding
	// RDP and converted at the best order (Account with "best").
	RouteRDP = "rdp"
	// RouteApproxDP: the approximate-DP baselines of package approxdp for
	// the eps0-LDP shuffle mechanisms: one shuffle of n reports by FMT20
	// (numerical clones, or the closed form of Thm 3.1), otherwise FMT20 at
	// k reports + Ullman subsampling + KOV15 composition of T identical
	// rounds (approxdp.SubsampledShuffle).
	RouteApproxDP = "approx-dp"
)

// Names of the approximate-DP bounds Best reports as winners; the same
// strings as the `shuffledp account` --bound values.
const (
	BoundFMT20Numeric  = "fmt20-numeric"
	BoundFMT20Analytic = "fmt20-analytic"
	BoundFMT20KOV15    = "fmt20+kov15"
)

// RouteResult is one route's (epsilon, delta) upper bound.
type RouteResult struct {
	// Route is RouteRDP, RouteApproxDP or RoutePLD.
	Route string `json:"route"`
	// Bound names what attains the route's value: for RouteRDP the RDP
	// bound(s) winning at the chosen order (e.g. "clones-rdp"), for
	// RouteApproxDP the baseline ("fmt20-numeric", "fmt20-analytic",
	// "fmt20+kov15"), for RoutePLD "pld".
	Bound   string  `json:"bound"`
	Epsilon float64 `json:"epsilon"`
	// Order, Conversion and AtGridEdge are set for RouteRDP only.
	Order      float64 `json:"order,omitempty"`
	Conversion string  `json:"conversion,omitempty"`
	AtGridEdge bool    `json:"at_grid_edge,omitempty"`
	// Conjecture is true when the route's value rests on a conjecture (the
	// RDP route of best-conjecture won by a conjecture bound).
	Conjecture bool `json:"conjecture,omitempty"`
}

// BestResult is the statement of Best: Result is the winning route's (its
// Winner names the winning bound, RouteResult.Bound), Route the winning
// route, Routes every route evaluated (the winner included) and Skipped
// every route that does not apply, with the reason.
type BestResult struct {
	Result
	Route   string        `json:"route"`
	Routes  []RouteResult `json:"routes"`
	Skipped []string      `json:"skipped,omitempty"`
}

// Best returns the smallest epsilon at delta over every PROVEN upper-bound
// route for the composed events, naming the winner (no conjecture enters
// it: BestWith with BoundBestConjecture opts in to them): the RDP route (Account
// with "best") for every mechanism; for eps0-LDP shuffle events (shuffle,
// subsampled-shuffle) whose rounds are all the same event, the
// approximate-DP route (RouteApproxDP); and when every event has a
// dominating pair (the LDP shuffle mechanisms, sampled-gaussian), the PLD
// route (RoutePLD, the pessimistic end of PLD). Every route is an upper
// bound on the epsilon of the composed mechanism at delta for the events'
// neighbouring relation, so their minimum is one too.
//
// Composition is where the routes differ, and Best is conservative about
// it: RDP and PLD compose any sequence of events (heterogeneous rounds add
// RDP, or convolve their PLDs);
// the approximate-DP route composes T identical (eps, delta)-DP rounds by
// KOV15 Thm 3.5, so it is used only when every composed event is the same
// event (a ledger of k-of-n rounds with a constant k). A run whose rounds
// differ (a partial round with k' < k reports, a change of eps0) is
// accounted by RDP alone, and Skipped says why.
//
// orders is the RDP order grid, as for Account (nil: the events' default).
// Best costs one Account plus, when they apply, one approximate-DP
// evaluation (milliseconds to about a second: the FMT20 numerical bound at
// the delta splits KOV15 tries) and one PLD composition (0.05 to 2 s).
//
// Results are memoised (memo.go); each call returns its own copies of the
// slices.
func Best(events []event.Composed, delta float64, orders []float64) (BestResult, error) {
	return BestWith(events, accounting.BoundBest, delta, orders)
}

// BestWith is Best for a named minimum: "" or "best" (every PROVEN route:
// Best), or BoundBestConjecture, the opt-in minimum whose RDP route also
// admits the conjectured shuffle Gaussian bounds (the other routes are
// proven). The result is labelled (Result.Conjecture, RouteResult.Conjecture)
// when a conjecture attains it. Any other bound is an error.
func BestWith(events []event.Composed, bound string, delta float64, orders []float64) (BestResult, error) {
	if bound == "" {
		bound = accounting.BoundBest
	}
	if !IsBest(bound) {
		return BestResult{}, fmt.Errorf("--bound %q is not a minimum over routes: use %s or %s", bound, accounting.BoundBest, BoundBestConjecture)
	}
	key := bound + "|" + memoKey(events, delta, orders)
	b, ok := bestMemo.get(key)
	if !ok {
		r, err := Account(events, bound, delta, orders)
		if err != nil {
			return BestResult{}, err
		}
		b = BestOf(events, r, delta)
		bestMemo.put(key, b)
	}
	b.Routes, b.Skipped = slices.Clone(b.Routes), slices.Clone(b.Skipped)
	return b, nil
}

var bestMemo = newMemo[BestResult](16)

// BestOf is Best given the RDP route's result r of the same events at the
// same delta (Account or AccountCurves with "best", as a ledger computes it
// from memoised curves): it adds the other routes and takes the minimum.
// routes names the routes to add (RouteApproxDP, RoutePLD); none means all.
// A ledger pricing every round passes RouteApproxDP alone: the PLD route
// costs about a second per evaluation at training sizes.
func BestOf(events []event.Composed, r Result, delta float64, routes ...string) BestResult {
	use := func(route string) bool { return len(routes) == 0 || slices.Contains(routes, route) }
	rdp := RouteResult{Route: RouteRDP, Bound: r.Winner, Epsilon: r.Epsilon, Order: r.Order,
		Conversion: r.Conversion, AtGridEdge: r.AtGridEdge, Conjecture: r.Conjecture}
	if rdp.Bound == "" {
		rdp.Bound = accounting.BoundBest
	}
	out := BestResult{Result: r, Route: RouteRDP, Routes: []RouteResult{rdp}}
	if r.Rounds == 0 || r.Lower {
		return out
	}
	for _, route := range []struct {
		name string
		f    func([]event.Composed, float64) (RouteResult, string, error)
	}{{RouteApproxDP, approxDPRoute}, {RoutePLD, pldRoute}} {
		if !use(route.name) {
			continue
		}
		rt, reason, err := route.f(events, delta)
		switch {
		case err != nil:
			out.Skipped = append(out.Skipped, fmt.Sprintf("%s: %v", route.name, err))
		case reason != "":
			out.Skipped = append(out.Skipped, fmt.Sprintf("%s: %s", route.name, reason))
		default:
			out.Routes = append(out.Routes, rt)
		}
	}
	for _, rt := range out.Routes[1:] {
		if rt.Epsilon < out.Epsilon {
			out.Route = rt.Route
			out.Winner = rt.Bound
			out.Guarantee = accounting.Guarantee{Epsilon: rt.Epsilon, Delta: delta, Order: rt.Order,
				Conversion: rt.Conversion, AtGridEdge: rt.AtGridEdge}
			out.Conjecture, out.Assumption = rt.Conjecture, ""
			if rt.Conjecture {
				out.Assumption = Assumption
			}
		}
	}
	return out
}

// approxDPRoute evaluates the approximate-DP route, or says why it does
// not apply (reason non-empty).
func approxDPRoute(events []event.Composed, delta float64) (RouteResult, string, error) {
	var e event.Event
	var steps int64
	for _, c := range events {
		if c.Count == 0 {
			continue
		}
		if !event.IsLDP(c.Event.Mechanism) {
			return RouteResult{}, fmt.Sprintf("no approximate-DP baseline for %s", c.Event.Mechanism), nil
		}
		if steps > 0 && c.Event != e {
			return RouteResult{}, "the rounds are not all the same event (KOV15 composes identical rounds only)", nil
		}
		e = c.Event
		steps += c.Count
	}
	if steps == 0 {
		return RouteResult{}, "no rounds", nil
	}
	if err := e.Validate(); err != nil {
		return RouteResult{}, "", err
	}
	k := e.Reports()
	rt := RouteResult{Route: RouteApproxDP}
	if e.Eps0 == 0 {
		rt.Bound, rt.Epsilon = BoundFMT20KOV15, 0
		return rt, "", nil
	}
	if steps == 1 && k == e.N {
		// One shuffle of n reports: FMT20's numerical bound and closed form.
		num, err := approxdp.NumericalEpsilonUpper(e.N, e.Eps0, delta)
		if err != nil {
			return RouteResult{}, "", err
		}
		rt.Bound, rt.Epsilon = BoundFMT20Numeric, math.Min(num, e.Eps0)
		if cf, valid, err := approxdp.ClosedFormEpsilon(e.N, e.Eps0, delta); err == nil && valid && cf < rt.Epsilon {
			rt.Bound, rt.Epsilon = BoundFMT20Analytic, cf
		}
		return rt, "", nil
	}
	c, err := approxdp.SubsampledShuffle(e.N, k, e.Eps0, steps, delta, approxdp.ShuffleBest)
	if err != nil {
		return RouteResult{}, "", err
	}
	rt.Bound, rt.Epsilon = BoundFMT20KOV15, c.Epsilon
	return rt, "", nil
}

// pldRoute evaluates the PLD route, or says why it does not apply.
func pldRoute(events []event.Composed, delta float64) (RouteResult, string, error) {
	for _, c := range events {
		if c.Count > 0 && !hasPLD(c.Event) {
			return RouteResult{}, fmt.Sprintf("%s: %v", c.Event.Mechanism, ErrNoDominatingPair), nil
		}
	}
	r, err := PLD(events, delta)
	if err != nil {
		return RouteResult{}, "", err
	}
	return RouteResult{Route: RoutePLD, Bound: BoundPLD, Epsilon: r.Upper}, "", nil
}
