package account

import (
	"errors"
	"fmt"
	"math"

	"github.com/shuffledp/shuffledp/accounting"
	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/route"
)

// Statement is the (epsilon, delta) guarantee of a composition of events
// under one bound (EpsilonOf, DeltaOf): the answer of an accountant that
// composes events of different mechanisms and counts, in the shape of
// dp_accounting's accountants.
type Statement struct {
	// Bound is the bound asked for; Winner names, for best, the bound or
	// route component that attains Epsilon; Route is the winning route of
	// best (route.RouteRDP, route.RouteApproxDP or route.RoutePLD).
	Bound  string `json:"bound"`
	Winner string `json:"winning_bound,omitempty"`
	Route  string `json:"route,omitempty"`
	// Epsilon and Delta: the composition is (Epsilon, Delta)-DP.
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
	// Order and Conversion are the RDP order and conversion of an RDP
	// route's statement; AtGridEdge warns that the order is the grid's
	// first or last usable one.
	Order      float64 `json:"order,omitempty"`
	Conversion string  `json:"conversion,omitempty"`
	AtGridEdge bool    `json:"at_grid_edge,omitempty"`
	// Kind is "upper" (a guarantee) or "rdp-lower" (a bound named as an
	// RDP lower bound: not a guarantee).
	Kind string `json:"kind"`
	// Routes lists, for best, every route compared.
	Routes []route.RouteResult `json:"routes,omitempty"`
	// Adjacency is the neighbouring relation the statement is for.
	Adjacency string `json:"adjacency,omitempty"`
	// Conjecture is true, and Assumption the unproven claim
	// (route.Assumption), when the statement rests on a conjecture (the
	// worst-case pair of the shuffle Gaussian mechanism): asked for by
	// name or by best-conjecture, never by best.
	Conjecture bool   `json:"conjecture,omitempty"`
	Assumption string `json:"assumption,omitempty"`
	Rounds     int64  `json:"rounds"`
}

// checkComposed validates every event and count.
func checkComposed(events []event.Composed) error {
	for i, c := range events {
		if err := c.Event.Validate(); err != nil {
			return fmt.Errorf("event %d: %w", i, err)
		}
		if c.Count < 0 {
			return fmt.Errorf("event %d: count must be >= 0, got %d", i, c.Count)
		}
	}
	return nil
}

// EpsilonOf is the epsilon at delta of the composition of events under
// bound: for best (or "") the minimum over every valid route (route.Best:
// RDP, the approximate-DP baselines of identical rounds, PLD), naming the
// winner; for pld the PLD accountant's pessimistic end (route.PLD); for
// rdp-best the RDP route of best alone; for any RDP bound of the events'
// mechanisms route.Account. orders nil means the events' default grids.
// The epsilon is never NaN, infinite or negative (an error instead).
func EpsilonOf(events []event.Composed, bound string, delta float64, orders []float64) (Statement, error) {
	if err := checkComposed(events); err != nil {
		return Statement{}, err
	}
	if !(delta > 0 && delta < 1) {
		return Statement{}, fmt.Errorf("--delta must be in (0,1), got %g", delta)
	}
	if bound == "" {
		bound = accounting.BoundBest
	}
	var s Statement
	switch bound {
	case accounting.BoundBest, route.BoundBestConjecture:
		b, err := route.BestWith(events, bound, delta, orders)
		if err != nil {
			return Statement{}, err
		}
		s = fromResult(bound, b.Result)
		s.Route, s.Routes = b.Route, b.Routes
	case route.BoundPLD:
		r, err := route.PLD(events, delta)
		if err != nil {
			return Statement{}, err
		}
		s = Statement{Bound: bound, Epsilon: r.Upper, Delta: r.Delta, Kind: accounting.KindUpper, Route: route.RoutePLD,
			Rounds: r.Rounds, Adjacency: event.ComposedAdjacency(events)}
	default:
		b := bound
		if b == BoundRDPBest {
			b = accounting.BoundBest
		}
		r, err := route.Account(events, b, delta, orders)
		var unknown *route.UnknownBoundError
		if errors.As(err, &unknown) {
			return Statement{}, fmt.Errorf("--bound %q does not apply to these events; use best, %s, %s or an RDP bound of their mechanism (%v)",
				bound, route.BoundPLD, BoundRDPBest, err)
		}
		if err != nil {
			return Statement{}, err
		}
		s = fromResult(bound, r)
		s.Route = route.RouteRDP
	}
	if math.IsNaN(s.Epsilon) || math.IsInf(s.Epsilon, 0) || s.Epsilon < 0 {
		return Statement{}, fmt.Errorf("%s: internal error: epsilon %g is not a finite non-negative number", bound, s.Epsilon)
	}
	return s, nil
}

func fromResult(bound string, r route.Result) Statement {
	s := Statement{Bound: bound, Winner: r.Winner, Epsilon: r.Epsilon, Delta: r.Delta, Order: r.Order, Conversion: r.Conversion,
		AtGridEdge: r.AtGridEdge, Kind: accounting.KindUpper, Adjacency: r.Adjacency, Conjecture: r.Conjecture, Assumption: r.Assumption, Rounds: r.Rounds}
	if r.Lower {
		s.Kind = accounting.KindRDPLower
	}
	return s
}

// DeltaOf is the smallest delta over the order grid at which the
// composition of events is (epsilon, delta)-DP by the RDP route of bound
// (best or rdp-best: at every order the smallest valid RDP upper bound;
// otherwise the named RDP bound), composed with accounting.Accountant and
// converted with the smaller of the CKS20 and Mironov conversions
// (accounting.DeltaFromRDP). The PLD and approximate-DP routes are not
// inverted: a delta from them could only be smaller. A lower-bound curve
// is refused: its delta would be no guarantee.
func DeltaOf(events []event.Composed, bound string, epsilon float64, orders []float64) (Statement, error) {
	if err := checkComposed(events); err != nil {
		return Statement{}, err
	}
	if math.IsNaN(epsilon) || math.IsInf(epsilon, 0) || epsilon < 0 {
		return Statement{}, fmt.Errorf("epsilon must be a finite number >= 0, got %g", epsilon)
	}
	b := bound
	if b == "" || b == BoundRDPBest {
		b = accounting.BoundBest
	}
	if len(orders) == 0 {
		for _, c := range events {
			if c.Count > 0 {
				orders = append(orders, route.DefaultOrders(c.Event)...)
			}
		}
	}
	acct, err := accounting.NewAccountant(dedupe(orders))
	if err != nil {
		return Statement{}, err
	}
	var rounds int64
	for i, c := range events {
		if c.Count == 0 {
			continue
		}
		curve, err := route.Curve(c.Event, b)
		if err != nil {
			return Statement{}, fmt.Errorf("event %d: %w", i, err)
		}
		if accounting.IsLower(curve) {
			return Statement{}, fmt.Errorf("--bound %s is a lower bound on the RDP curve: its delta would guarantee nothing", bound)
		}
		if err := acct.Compose64(curve, c.Count); err != nil {
			return Statement{}, err
		}
		rounds += c.Count
	}
	label := bound
	if label == "" || label == accounting.BoundBest {
		label = BoundRDPBest // the RDP route alone: "best" is printed only for best
	}
	s := Statement{Bound: label, Epsilon: epsilon, Kind: accounting.KindUpper, Route: route.RouteRDP, Rounds: rounds,
		Adjacency: event.ComposedAdjacency(events)}
	if rounds == 0 {
		return s, nil // nothing composed: delta 0
	}
	g, err := acct.Delta(epsilon)
	if err != nil {
		return Statement{}, err
	}
	if math.IsNaN(g.Delta) || g.Delta < 0 {
		return Statement{}, fmt.Errorf("%s: internal error: delta %g is not a number in [0, 1]", bound, g.Delta)
	}
	s.Delta, s.Order, s.Conversion, s.AtGridEdge = math.Min(g.Delta, 1), g.Order, g.Conversion, g.AtGridEdge
	return s, nil
}

// dedupe returns the distinct values of xs.
func dedupe(xs []float64) []float64 {
	seen := map[float64]bool{}
	var out []float64
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// Interval is the certified interval of a composition (route.CertifiedInterval):
// the worst case's epsilon lies in [Lower, Upper], Lower the exact
// epsilon of a concrete mechanism (Witness), Upper best's guarantee.
type Interval struct {
	Lower      float64 `json:"lower"`
	Upper      float64 `json:"upper"`
	Delta      float64 `json:"delta"`
	Ratio      float64 `json:"ratio,omitempty"` // Upper/Lower; omitted when Lower is 0
	UpperBound string  `json:"upper_bound,omitempty"`
	Witness    string  `json:"witness,omitempty"`
	Rounds     int64   `json:"rounds"`
}

// CertifiedOf is the certified interval of the composition at delta; it
// exists for the eps0-LDP shuffle mechanisms only (an error otherwise).
func CertifiedOf(events []event.Composed, delta float64) (Interval, error) {
	if err := checkComposed(events); err != nil {
		return Interval{}, err
	}
	c, err := route.CertifiedInterval(events, delta)
	if err != nil {
		return Interval{}, err
	}
	iv := Interval{Lower: c.Lower, Upper: c.Upper, Delta: c.Delta, UpperBound: c.UpperBound, Witness: c.Witness, Rounds: c.Rounds}
	if !math.IsInf(c.Ratio, 0) && !math.IsNaN(c.Ratio) {
		iv.Ratio = c.Ratio
	}
	return iv, nil
}
