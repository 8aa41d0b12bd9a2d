package route

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/shuffledp/shuffledp/accounting"
	"github.com/shuffledp/shuffledp/event"
)

// Result is the (epsilon, delta) statement of composed events under one
// bound, with what `shuffledp account` reports beside it.
type Result struct {
	accounting.Guarantee
	// Winner names, for "best", the component bound that wins at the
	// chosen order (several, comma-separated, when the events' best curves
	// are won by different components); empty otherwise.
	Winner string
	// Lower is true when the bound is a lower bound on the RDP curve:
	// Epsilon is then not a guarantee, and not a lower bound on the
	// mechanism's epsilon either (the conversion over-estimates; see
	// accounting.KindRDPLower).
	Lower bool
	// Conjecture is true when the statement rests on a conjecture: a
	// Gaussian event whose bound (or, for best-conjecture, the component
	// winning at the chosen order) is a conjecture bound (IsConjecture).
	// Such an epsilon is not a proven guarantee. "best" never sets it.
	Conjecture bool
	// Assumption is the constant Assumption when Conjecture is true: the
	// unproven claim, for notes.
	Assumption string
	// Rounds is the total count of the composed events; Guarantee is zero
	// (epsilon 0 at delta) when it is 0.
	Rounds int64
	// Adjacency is the neighbouring relation the statement is for: the
	// events' common EffectiveAdjacency, or zero-out when they differ
	// (every curve bounds zero-out pairs; adjacency.go). Empty when there
	// are no events.
	Adjacency string
}

// Epsilon composes the events under the named bound on the given orders and
// converts the total to (epsilon, delta)-DP at the best order, with the
// smaller of the CKS20 and Mironov conversions (accounting.Accountant).
// orders nil means the events' default grids (their union for mixed
// mechanisms, widened as DefaultOrders describes when the optimum is at the
// edge of an adaptive grid). Every curve is evaluated at every order of the
// union: a checkin-gaussian event composed with an LDP event is evaluated
// up to order 4096, which costs about a minute at n = 60000 (20 s at
// order 2048 alone); pass orders to bound that cost. For mixed mechanisms the bound must apply to
// each of them ("best" does; "gaussian-cor1" to the Gaussian ones). The
// epsilon is never negative, NaN or infinite (an error instead), and it is
// a guarantee: a lower bound is refused (Account reports lower bounds).
func Epsilon(events []event.Composed, bound string, delta float64, orders []float64) (accounting.Guarantee, error) {
	r, err := Account(events, bound, delta, orders)
	if err != nil {
		return accounting.Guarantee{}, err
	}
	if r.Lower {
		return accounting.Guarantee{}, fmt.Errorf("--bound %s is a lower bound on the RDP curve, not a guarantee (use route.Account to evaluate it)", bound)
	}
	return r.Guarantee, nil
}

// Account is Epsilon with the winner of "best", whether the bound is a
// lower bound (then Epsilon is not a guarantee), and whether the statement
// rests on a conjecture (Result.Conjecture).
func Account(events []event.Composed, bound string, delta float64, orders []float64) (Result, error) {
	if !(delta > 0 && delta < 1) {
		return Result{}, fmt.Errorf("--delta must be in (0,1), got %g", delta)
	}
	if bound == "" {
		bound = accounting.BoundBest
	}
	if _, err := countRounds(events); err != nil {
		return Result{}, err
	}
	curves := make([]accounting.RDP, len(events))
	for i, c := range events {
		curve, err := Curve(c.Event, bound)
		if err != nil {
			return Result{}, err
		}
		curves[i] = curve
	}
	return AccountCurves(events, curves, bound, delta, orders, true)
}

func countRounds(events []event.Composed) (int64, error) {
	var rounds int64
	for _, c := range events {
		if c.Count < 0 {
			return 0, fmt.Errorf("--steps must be >= 0, got %d (event %s)", c.Count, c.Event)
		}
		if rounds > math.MaxInt64-c.Count {
			return 0, fmt.Errorf("--steps: total count overflows int64")
		}
		rounds += c.Count
	}
	return rounds, nil
}

// AccountCurves is Account over curves the caller already built with
// Curve(events[i].Event, bound), curves[i] for events[i] (a ledger memoises
// them so that pricing a round costs O(orders)). A curve wrapping a "best"
// curve names its winner if it has the method RDPWinner(order) (float64,
// string, error), as *accounting.BestCurve does. With explain false,
// Winner and Assumption are left empty: naming the winner evaluates every
// component bound at the chosen order.
func AccountCurves(events []event.Composed, curves []accounting.RDP, bound string, delta float64, orders []float64, explain bool) (Result, error) {
	if !(delta > 0 && delta < 1) {
		return Result{}, fmt.Errorf("--delta must be in (0,1), got %g", delta)
	}
	if len(curves) != len(events) {
		return Result{}, fmt.Errorf("event: %d curves for %d events", len(curves), len(events))
	}
	if bound == "" {
		bound = accounting.BoundBest
	}
	rounds, err := countRounds(events)
	if err != nil {
		return Result{}, err
	}
	res := Result{Guarantee: accounting.Guarantee{Delta: delta}, Rounds: rounds, Adjacency: event.ComposedAdjacency(events)}
	for _, c := range curves {
		res.Lower = res.Lower || accounting.IsLower(c)
	}
	if rounds == 0 {
		return res, nil
	}
	adaptive := false
	if len(orders) == 0 {
		var grids [][]float64
		for _, c := range events {
			if c.Count > 0 {
				grids = append(grids, DefaultOrders(c.Event))
				adaptive = adaptive || adaptiveGrid(c.Event)
			}
		}
		orders = union(grids...)
	}
	g, err := compose(events, curves, orders, delta)
	if err == nil && adaptive && g.Order == adaptiveMaxOrder {
		// The optimum is at the edge of an adaptive grid: widen.
		var grids [][]float64
		for _, c := range events {
			if c.Count > 0 {
				grids = append(grids, wideOrders(c.Event))
			}
		}
		g, err = compose(events, curves, union(append(grids, orders)...), delta)
	}
	if err != nil {
		if strings.HasPrefix(err.Error(), bound+":") {
			return Result{}, err
		}
		return Result{}, fmt.Errorf("%s: %w", bound, err)
	}
	if math.IsNaN(g.Epsilon) || math.IsInf(g.Epsilon, 0) || g.Epsilon < 0 {
		return Result{}, fmt.Errorf("%s: internal error: epsilon %g is not a finite non-negative number", bound, g.Epsilon)
	}
	res.Guarantee = g
	if !explain {
		return res, nil
	}
	var winners []string
	for i, c := range curves {
		if events[i].Count == 0 {
			continue
		}
		w := c.Name()
		if b, ok := c.(winnerCurve); ok {
			if _, w, err = b.RDPWinner(g.Order); err != nil {
				return Result{}, fmt.Errorf("%s: %w", bound, err)
			}
			if !slices.Contains(winners, w) {
				winners = append(winners, w)
			}
		}
		if event.IsGaussian(events[i].Event.Mechanism) && IsConjecture(w) {
			res.Conjecture, res.Assumption = true, Assumption
		}
	}
	res.Winner = strings.Join(winners, ",")
	return res, nil
}

// winnerCurve is a curve that names the component winning at an order
// (accounting.BestCurve).
type winnerCurve interface {
	RDPWinner(order float64) (float64, string, error)
}

// compose sums count times each curve on orders and converts at delta.
func compose(events []event.Composed, curves []accounting.RDP, orders []float64, delta float64) (accounting.Guarantee, error) {
	acct, err := accounting.NewAccountant(orders)
	if err != nil {
		return accounting.Guarantee{}, err
	}
	for i, c := range curves {
		if events[i].Count == 0 {
			continue
		}
		if event.IsGaussian(events[i].Event.Mechanism) {
			warmUp(c, orders)
		}
		if err := acct.Compose64(c, events[i].Count); err != nil {
			return accounting.Guarantee{}, err
		}
	}
	return acct.Epsilon(delta)
}

// warmUp evaluates the largest integer order of the grid first: the
// Gaussian curves extend their moment tables geometrically on demand, and
// (below n+1 clients) each extension recomputes the table, so asking for the
// top order first builds it once instead of about twice.
func warmUp(c accounting.RDP, orders []float64) {
	for i := len(orders) - 1; i >= 0; i-- {
		if o := orders[i]; o == math.Trunc(o) && o >= 2 && o <= 1<<16 {
			_, _ = c.RDP(o) // warm-up only; Compose64 reports errors
			return
		}
	}
}
