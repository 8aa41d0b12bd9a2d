package ledger

import (
	"fmt"
	"math"
	"strings"

	"github.com/shuffledp/shuffledp/accounting"
	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/metrics"
	"github.com/shuffledp/shuffledp/route"
)

// Statement is a run's (epsilon, delta) guarantee as its ledger computes
// it, once per round: the one number every reader of the run prints (the
// metrics rows, the dashboard, telemetry, `train`, `up`, the shuffler's
// stop and `ledger show`). Under the bound "best" (or "best-conjecture")
// it is the smallest over the routes of route.Best (Statement of book);
// under a named RDP bound, that bound's RDP route.
type Statement struct {
	accounting.Guarantee
	// Bound is the run's bound (RunInfo.Bound): "best", "best-conjecture"
	// or a named RDP bound.
	Bound string `json:"bound"`
	// Route is the route attaining Epsilon (route.RouteRDP, RouteApproxDP,
	// RoutePLD); Winner the bound attaining it within the route (for the
	// RDP route the component bound(s) winning at Order).
	Route  string `json:"route"`
	Winner string `json:"winning_bound,omitempty"`
	// Conjecture is true when Epsilon rests on a conjecture (a conjectured
	// shuffle Gaussian bound won the RDP route of "best-conjecture"; see
	// route.IsConjecture); Assumption then states it. Such an epsilon is
	// not a proven guarantee, and every place printing it says so (Label).
	Conjecture bool   `json:"conjecture,omitempty"`
	Assumption string `json:"assumption,omitempty"`
	// Adjacency is the neighbouring relation Epsilon is for.
	Adjacency string `json:"adjacency,omitempty"`
	// Rounds is the number of rounds accounted for.
	Rounds int64 `json:"rounds"`
	// EvaluatedAt is set when the winning route is a costly one (approximate
	// DP, PLD) evaluated at a larger composition than the run's (the
	// checkpoint, Checkpoint): its number of rounds. Epsilon bounds the run
	// all the same (a composition of fewer rounds is a post-processing of
	// one with more: docs/proofs/ledger-checkpoints.md), and is at most
	// one grid step (1/64 of the rounds) above the route's value at the
	// run's own rounds.
	EvaluatedAt int64 `json:"evaluated_at_rounds,omitempty"`
}

// Label names the statement for a person (metrics.Label): the bound, then
// the winning route and bound, then "CONJECTURE" when it rests on one, for
// example "best (pld route)" or "best-conjecture (rdp route: iclr23-thm1;
// CONJECTURE)". A named RDP bound is printed bare.
func (s Statement) Label() string {
	if s.Rounds == 0 {
		return s.Bound
	}
	via := s.Route
	if !route.IsBest(s.Bound) {
		via = ""
	}
	return metrics.Label(s.Bound, via, s.Winner, s.EvaluatedAt, s.Conjecture)
}

// checkpointStep is the grid of Checkpoint: every count up to it, then
// steps of about 1/checkpointStep of the count.
const checkpointStep = 64

// Checkpoint returns the composition the costly routes of a run of c
// rounds of one event are evaluated at: c itself up to 64 rounds, beyond
// the smallest point >= c of the grid m_0 = 64, m_{i+1} = m_i +
// ceil(m_i/64). So a run's costly routes are evaluated about 64 + 64
// ln(T/64) times over T rounds (367 times over 10,557 rounds, 506 over
// 90,000) instead of T times, each evaluation serving every round up to
// its point, and a point is at most 1/64 of the rounds (plus one) above c.
func Checkpoint(c int64) int64 {
	if c <= checkpointStep {
		return c
	}
	m := int64(checkpointStep)
	for m < c {
		m += (m + checkpointStep - 1) / checkpointStep
	}
	return m
}

// checkpointGroups returns groups with every count raised to its
// Checkpoint (a copy), and whether any changed.
func checkpointGroups(groups []event.Composed) ([]event.Composed, bool) {
	out := make([]event.Composed, len(groups))
	changed := false
	for i, g := range groups {
		out[i] = g
		out[i].Count = Checkpoint(g.Count)
		changed = changed || out[i].Count != g.Count
	}
	return out, changed
}

// costlyRoutes is the cached verdict of the costly routes on one
// checkpoint composition at one delta.
type costlyRoutes struct {
	routes  []route.RouteResult
	skipped []string
}

// maxCostly bounds the book's cache of costly routes (a run needs the
// current checkpoint and, while pricing a round, the next one).
const maxCostly = 8

// costly returns the approximate-DP and PLD routes (route.BestOf's) of
// the composition cp at delta, from the cache or computed once.
func (b *book) costly(cp []event.Composed, delta float64) (costlyRoutes, error) {
	var key strings.Builder
	fmt.Fprintf(&key, "%v", delta)
	for _, g := range cp {
		k, err := EncodeEvent(g.Event)
		if err != nil {
			return costlyRoutes{}, err
		}
		fmt.Fprintf(&key, "|%d*%s", g.Count, k)
	}
	if c, ok := b.costlyCache[key.String()]; ok {
		return c, nil
	}
	r, err := b.result(cp, delta, false)
	if err != nil {
		return costlyRoutes{}, err
	}
	br := route.BestOf(cp, r, delta, route.RouteApproxDP, route.RoutePLD)
	c := costlyRoutes{routes: br.Routes[1:], skipped: br.Skipped}
	if len(b.costlyCache) >= maxCostly {
		clear(b.costlyCache)
	}
	b.costlyCache[key.String()] = c
	b.costlyEvals++
	return c, nil
}

// statement computes the Statement of groups at delta: the RDP route of
// the run's bound on groups themselves (cheap: memoized curves) and, under
// a best bound, the costly routes at the checkpoint of groups
// (checkpointGroups: each count raised to its Checkpoint), the smallest
// epsilon winning. Every route's value is an upper bound on the epsilon
// of the composition it was evaluated at, and so on that of groups, a
// sub-composition (docs/proofs/ledger-checkpoints.md). With explain, the
// RDP route's winner and conjecture label are named (a look-up per event
// at one order).
func (b *book) statement(groups []event.Composed, delta float64, explain bool) (Statement, error) {
	r, err := b.result(groups, delta, explain)
	if err != nil {
		return Statement{}, err
	}
	s := Statement{Guarantee: r.Guarantee, Bound: b.info.Bound, Route: route.RouteRDP, Winner: r.Winner,
		Conjecture: r.Conjecture, Assumption: r.Assumption, Adjacency: r.Adjacency, Rounds: r.Rounds}
	if !route.IsBest(b.info.Bound) || r.Rounds == 0 || r.Lower {
		return s, nil
	}
	cp, changed := checkpointGroups(groups)
	c, err := b.costly(cp, delta)
	if err != nil {
		return Statement{}, err
	}
	for _, rt := range c.routes {
		if rt.Epsilon < s.Epsilon && !math.IsNaN(rt.Epsilon) && rt.Epsilon >= 0 {
			s.Guarantee = accounting.Guarantee{Epsilon: rt.Epsilon, Delta: delta}
			s.Route, s.Winner, s.Conjecture, s.Assumption, s.EvaluatedAt = rt.Route, rt.Bound, rt.Conjecture, "", 0
			if rt.Conjecture {
				s.Assumption = route.Assumption
			}
			if changed {
				s.EvaluatedAt = totalCount(cp)
			}
		}
	}
	return s, nil
}

func totalCount(groups []event.Composed) int64 {
	var n int64
	for _, g := range groups {
		n += g.Count
	}
	return n
}

// StatementOf is the Statement a ledger of the given bound and orders
// states for a run whose composition is events (distinct events with
// their counts, in order of first appearance) at delta: what Ledger.Statement
// returns after those debits, computed without a store.
func StatementOf(events []event.Composed, bound string, delta float64, orders []float64) (Statement, error) {
	info, err := RunInfo{Run: "statement", Delta: delta, Bound: bound, Orders: orders}.normalize()
	if err != nil {
		return Statement{}, err
	}
	b := newBook(info)
	for _, c := range events {
		if _, err := b.curve(c.Event); err != nil {
			return Statement{}, err
		}
	}
	return b.statement(events, delta, true)
}
