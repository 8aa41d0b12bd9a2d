package ledger

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/shuffledp/shuffledp/accounting"
	"github.com/shuffledp/shuffledp/event"
)

// account is event.Account over curves the caller has already built (the
// ledger's memoized ones), so that pricing a round costs O(orders) instead
// of rebuilding every curve. It follows event.Account step for step (the
// same grid, the same widening, the same composition order), so that its
// result is event.Account's bit for bit; TestAccountMatchesEvent checks
// that for every mechanism, widening included. Without explain it leaves
// Winner and Assumption empty (naming the winner evaluates every component
// bound at the chosen order, which costs more than the rest: pricing a
// debit does not need it).
func account(events []event.Composed, curves []accounting.RDP, bound string, delta float64, orders []float64, explain bool) (event.Result, error) {
	if !(delta > 0 && delta < 1) {
		return event.Result{}, fmt.Errorf("--delta must be in (0,1), got %g", delta)
	}
	if bound == "" {
		bound = accounting.BoundBest
	}
	var rounds int64
	for _, c := range events {
		if c.Count < 0 || rounds > math.MaxInt64-c.Count {
			return event.Result{}, fmt.Errorf("event %s: count %d out of range", c.Event, c.Count)
		}
		rounds += c.Count
	}
	res := event.Result{Guarantee: accounting.Guarantee{Delta: delta}, Rounds: rounds}
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
				grids = append(grids, c.Event.DefaultOrders())
				adaptive = adaptive || isAdaptive(c.Event)
			}
		}
		orders = union(grids...)
	}
	g, err := compose(events, curves, orders, delta)
	if err == nil && adaptive && g.Order == adaptiveMaxOrder {
		var grids [][]float64
		for _, c := range events {
			if c.Count > 0 {
				grids = append(grids, wideOrders(c.Event))
			}
		}
		g, err = compose(events, curves, union(append(grids, orders)...), delta)
	}
	if err != nil {
		return event.Result{}, fmt.Errorf("%s: %w", bound, err)
	}
	if math.IsNaN(g.Epsilon) || math.IsInf(g.Epsilon, 0) || g.Epsilon < 0 {
		return event.Result{}, fmt.Errorf("%s: epsilon %g is not a finite non-negative number", bound, g.Epsilon)
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
		src := c
		if m, ok := c.(*memoCurve); ok {
			src = m.src
		}
		if b, ok := src.(*accounting.BestCurve); ok {
			if _, w, err = b.RDPWinner(g.Order); err != nil {
				return event.Result{}, fmt.Errorf("%s: %w", bound, err)
			}
			if !slices.Contains(winners, w) {
				winners = append(winners, w)
			}
		}
		if isGaussian(events[i].Event.Mechanism) && w != event.BoundGaussianCor1 {
			res.Assumption = event.Assumption
		}
	}
	res.Winner = strings.Join(winners, ",")
	return res, nil
}

// compose sums count times each curve on orders and converts at delta, as
// event's compose does (the memoized curves answer the warm-up from memory).
func compose(events []event.Composed, curves []accounting.RDP, orders []float64, delta float64) (accounting.Guarantee, error) {
	acct, err := accounting.NewAccountant(orders)
	if err != nil {
		return accounting.Guarantee{}, err
	}
	for i, c := range curves {
		if events[i].Count == 0 {
			continue
		}
		if m, ok := c.(*memoCurve); ok && isGaussian(events[i].Event.Mechanism) {
			m.warm(orders)
		}
		if err := acct.Compose64(c, events[i].Count); err != nil {
			return accounting.Guarantee{}, err
		}
	}
	return acct.Epsilon(delta)
}

// The grid policy of event.Account for orders == nil: the union of the
// events' DefaultOrders, widened when the optimum sits at the top of an
// adaptive grid (subsampled-shuffle-gaussian and checkin-gaussian stop at
// order 256 unless it is optimal).
const adaptiveMaxOrder = 256

func isGaussian(m string) bool {
	return m == event.ShuffleGaussian || m == event.SubsampledShuffleGaussian || m == event.CheckinGaussian
}

func isAdaptive(e event.Event) bool {
	return e.Mechanism == event.SubsampledShuffleGaussian || e.Mechanism == event.CheckinGaussian
}

// wideOrders: for subsampled-shuffle-gaussian the shuffle-gaussian default
// grid (every integer to 4096), for checkin-gaussian its default grid
// joined with accounting.DefaultOrders.
func wideOrders(e event.Event) []float64 {
	switch e.Mechanism {
	case event.SubsampledShuffleGaussian:
		return event.Event{Mechanism: event.ShuffleGaussian, N: e.N, Sigma: e.Sigma}.DefaultOrders()
	case event.CheckinGaussian:
		return union(e.DefaultOrders(), accounting.DefaultOrders())
	}
	return e.DefaultOrders()
}

func union(grids ...[]float64) []float64 {
	var o []float64
	for _, g := range grids {
		o = append(o, g...)
	}
	slices.Sort(o)
	return slices.Compact(o)
}
