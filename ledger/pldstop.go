package ledger

import (
	"math"
	"slices"

	"github.com/shuffledp/shuffledp/accounting"
	"github.com/shuffledp/shuffledp/event"
)

// pldAllowance is the PLD route's verdict on a run past the point where its
// cheap routes (RDP, approximate DP) refuse the next round: computed once,
// when next first finds the cheap routes above the target, it holds the PLD
// route's epsilon (event.BestOf with event.RoutePLD: the smaller of the RDP
// route and the pessimistic PLD) of the run's composition base extended by
// m more rounds of ev, at the m an integer search evaluated, and limit, the
// largest m found to stay <= the target.
//
// Soundness: a composition of base and j <= m rounds of ev is a
// post-processing of the one with m rounds (drop the last m - j outputs),
// so its true epsilon at delta is at most that of m rounds, which the
// evaluated point bounds. So bound(j) (the smallest evaluated epsilon at an
// m >= j) is a valid upper bound at j, and a debit up to base + limit
// rounds of ev never takes the run past the target by best. One search
// costs about 2 log2(limit) PLD evaluations, once per run instead of one
// per round.
type pldAllowance struct {
	base   []event.Composed // the run's composition when the search ran
	ev     event.Event
	key    string
	delta  float64
	target float64
	points map[int64]float64 // m -> epsilon of base + m rounds of ev
	limit  int64
}

// pldSearchMax caps the number of further rounds the search considers.
const pldSearchMax = 1 << 30

// extra returns j with groups = base + j rounds of ev, or false.
func (a *pldAllowance) extra(groups []event.Composed) (int64, bool) {
	i := slices.IndexFunc(a.base, func(c event.Composed) bool { return c.Event == a.ev })
	n := len(a.base)
	if i < 0 {
		n++
	}
	if len(groups) != n {
		return 0, false
	}
	var j int64
	for g := range groups {
		switch {
		case g < len(a.base) && g == i:
			if groups[g].Event != a.ev || groups[g].Count < a.base[g].Count {
				return 0, false
			}
			j = groups[g].Count - a.base[g].Count
		case g < len(a.base):
			if groups[g] != a.base[g] {
				return 0, false
			}
		default: // ev, new to the run
			if groups[g].Event != a.ev {
				return 0, false
			}
			j = groups[g].Count
		}
	}
	return j, true
}

// bound returns the smallest evaluated epsilon at m >= j within the limit
// (a valid upper bound at j), or +Inf.
func (a *pldAllowance) bound(j int64) float64 {
	eps := math.Inf(1)
	if j > a.limit {
		return eps
	}
	for m, e := range a.points {
		if m >= j && m <= a.limit {
			eps = math.Min(eps, e)
		}
	}
	return eps
}

// compose returns base + m rounds of ev.
func (a *pldAllowance) compose(m int64) []event.Composed {
	groups := slices.Clone(a.base)
	if i := slices.IndexFunc(groups, func(c event.Composed) bool { return c.Event == a.ev }); i >= 0 {
		groups[i].Count += m
	} else if m > 0 {
		groups = append(groups, event.Composed{Event: a.ev, Count: m})
	}
	return groups
}

// pldAllow runs the search for ev from the book's composition (one round:
// next's question; then doubling, then integer bisection) and stores it.
func (b *book) pldAllow(ev event.Event, delta, target float64) error {
	key, err := EncodeEvent(ev)
	if err != nil {
		return err
	}
	a := &pldAllowance{base: slices.Clone(b.groups), ev: ev, key: key, delta: delta, target: target, points: map[int64]float64{}}
	b.allow = a
	eval := func(m int64) (float64, error) {
		groups := a.compose(m)
		r, err := b.result(groups, delta, false)
		if err != nil {
			return 0, err
		}
		best := event.BestOf(groups, r, delta, event.RoutePLD)
		a.points[m] = best.Epsilon
		return best.Epsilon, nil
	}
	good, bad := int64(0), int64(1)
	for {
		e, err := eval(bad)
		if err != nil {
			return err
		}
		if e > target {
			break
		}
		good = bad
		if bad >= pldSearchMax {
			a.limit = good
			return nil
		}
		bad = min(2*bad, pldSearchMax)
	}
	for bad-good > 1 {
		m := good + (bad-good)/2
		e, err := eval(m)
		if err != nil {
			return err
		}
		if e <= target {
			good = m
		} else {
			bad = m
		}
	}
	a.limit = good
	return nil
}

// pldGuarantee returns the allowance's guarantee for groups, or false.
func (b *book) pldGuarantee(groups []event.Composed, delta, above float64) (accounting.Guarantee, bool) {
	a := b.allow
	if a == nil || a.delta != delta || a.target != above {
		return accounting.Guarantee{}, false
	}
	j, ok := a.extra(groups)
	if !ok {
		return accounting.Guarantee{}, false
	}
	eps := a.bound(j)
	if math.IsInf(eps, 1) {
		return accounting.Guarantee{}, false
	}
	return accounting.Guarantee{Epsilon: eps, Delta: delta}, true
}
