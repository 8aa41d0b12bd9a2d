package ledger

import (
	"fmt"
	"slices"

	"github.com/shuffledp/shuffledp/accounting"
	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/route"
)

// book is the accounting view of one run's entries, with no storage: the
// entries in round order, the distinct events with their counts (the
// composition), and a memoized RDP curve per distinct event. It is not
// safe for concurrent use; Ledger guards it.
type book struct {
	info    RunInfo
	entries []Entry                   // round order
	byRound map[int64]int             // round -> index in entries
	groups  []event.Composed          // distinct events, in order of first appearance by round
	keys    []string                  // EncodeEvent of each group's event
	curves  map[string]accounting.RDP // memoized, by key

	// costlyCache holds the costly routes of recent checkpoint
	// compositions (statement.go); costlyEvals counts their evaluations.
	costlyCache map[string]costlyRoutes
	costlyEvals int
	// stmt is the explained statement of the entries at stmtDelta, valid
	// while stmtRounds equals the number of entries (-1: none).
	stmt       Statement
	stmtRounds int
	stmtDelta  float64
}

func newBook(info RunInfo) *book {
	return &book{info: info, byRound: map[int64]int{}, curves: map[string]accounting.RDP{},
		costlyCache: map[string]costlyRoutes{}, stmtRounds: -1}
}

// current returns the explained statement of the book's entries at delta,
// computed once per number of entries (the ledger's once-per-round
// epsilon).
func (b *book) current(delta float64) (Statement, error) {
	if b.stmtRounds == len(b.entries) && b.stmtDelta == delta {
		return b.stmt, nil
	}
	s, err := b.statement(b.groups, delta, true)
	if err != nil {
		return Statement{}, err
	}
	b.stmt, b.stmtRounds, b.stmtDelta = s, len(b.entries), delta
	return s, nil
}

// load replaces the entries (in round order, as a Store returns them).
func (b *book) load(entries []Entry) error {
	b.entries = b.entries[:0]
	b.byRound = make(map[int64]int, len(entries))
	b.stmtRounds = -1
	for _, e := range entries {
		if e.Run != b.info.Run {
			return fmt.Errorf("%w: entry of run %q in run %q", ErrCorrupt, e.Run, b.info.Run)
		}
		if n := len(b.entries); n > 0 && e.Round <= b.entries[n-1].Round {
			return fmt.Errorf("%w: run %q: rounds %d and %d out of order", ErrCorrupt, e.Run, b.entries[n-1].Round, e.Round)
		}
		b.byRound[e.Round] = len(b.entries)
		b.entries = append(b.entries, e)
	}
	return b.regroup()
}

// regroup recomputes the composition from the entries.
func (b *book) regroup() error {
	b.groups, b.keys = b.groups[:0], b.keys[:0]
	for _, e := range b.entries {
		if err := b.count(e.Event); err != nil {
			return err
		}
	}
	return nil
}

// canonical returns ev in the one form the ledger stores and compares:
// for the mechanisms where every client reports, k = n and k omitted are
// the same event, stored with k omitted.
func canonical(ev event.Event) event.Event {
	if (ev.Mechanism == event.Shuffle || ev.Mechanism == event.ShuffleGaussian) && ev.K == ev.N {
		ev.K = 0
	}
	return ev
}

// count adds one occurrence of ev to the composition.
func (b *book) count(ev event.Event) error {
	key, err := EncodeEvent(ev)
	if err != nil {
		return err
	}
	if i := slices.Index(b.keys, key); i >= 0 {
		b.groups[i].Count++
		return nil
	}
	b.groups = append(b.groups, event.Composed{Event: ev, Count: 1})
	b.keys = append(b.keys, key)
	return nil
}

// add records a committed entry, whose round is above every round of
// the book (Ledger.Debit ensures it).
func (b *book) add(e Entry) error {
	if n := len(b.entries); n > 0 && e.Round <= b.entries[n-1].Round {
		return fmt.Errorf("round %d is not above the last debited round %d", e.Round, b.entries[n-1].Round)
	}
	b.byRound[e.Round] = len(b.entries)
	b.entries = append(b.entries, e)
	return b.count(e.Event)
}

// last returns the last debited round (-1 if none).
func (b *book) last() int64 {
	if len(b.entries) == 0 {
		return -1
	}
	return b.entries[len(b.entries)-1].Round
}

// curve returns the memoized curve of ev under the run's bound, refusing
// a lower bound (a budget needs an upper bound).
func (b *book) curve(ev event.Event) (accounting.RDP, error) {
	key, err := EncodeEvent(ev)
	if err != nil {
		return nil, err
	}
	if c, ok := b.curves[key]; ok {
		return c, nil
	}
	src, err := route.Curve(ev, b.info.Bound)
	if err != nil {
		return nil, err
	}
	if accounting.IsLower(src) {
		return nil, fmt.Errorf("bound %q of %s is a lower bound: it certifies no privacy budget", src.Name(), ev.Mechanism)
	}
	c := memoize(src)
	b.curves[key] = c
	return c, nil
}

// result composes groups (with delta) and converts to (epsilon, delta)
// with route.AccountCurves over the memoized curves, so that it is
// route.Account's result bit for bit (with explain, naming the winner and
// the assumption too) at the cost of a look-up per order; no rounds cost
// epsilon 0 (order 0), as `account --steps 0` reports.
func (b *book) result(groups []event.Composed, delta float64, explain bool) (route.Result, error) {
	curves := make([]accounting.RDP, len(groups))
	for i, g := range groups {
		c, err := b.curve(g.Event)
		if err != nil {
			return route.Result{}, err
		}
		curves[i] = c
	}
	r, err := route.AccountCurves(groups, curves, b.info.Bound, delta, b.info.Orders, explain)
	if err != nil {
		return route.Result{}, fmt.Errorf("privacy accounting of run %q: %w", b.info.Run, err)
	}
	return r, nil
}

// sameAdjacency refuses an event that would change the neighbouring
// relation the run's epsilon is stated for (event.ComposedAdjacency of its
// entries): composing, say, a zero-out round into a replace-one run would
// turn its statement into a zero-out one. An event stored without an
// adjacency has its legacy meaning (event.Event.EffectiveAdjacency), so a
// run started before the field existed continues under its legacy
// adjacency spelled out.
func (b *book) sameAdjacency(ev event.Event) error {
	if len(b.groups) == 0 {
		return nil
	}
	was := event.ComposedAdjacency(b.groups)
	if now := event.ComposedAdjacency(append(slices.Clone(b.groups), event.Composed{Event: ev, Count: 1})); now != was {
		return fmt.Errorf("--adjacency %s of %s would make run %q's epsilon, so far for %s adjacency, one for %s: a run's epsilon is for one neighbouring relation",
			ev.EffectiveAdjacency(), ev, b.info.Run, was, now)
	}
	return nil
}

// with returns the composition with one more occurrence of ev (a copy).
func (b *book) with(ev event.Event) ([]event.Composed, error) {
	key, err := EncodeEvent(ev)
	if err != nil {
		return nil, err
	}
	groups := slices.Clone(b.groups)
	if i := slices.Index(b.keys, key); i >= 0 {
		groups[i].Count++
	} else {
		groups = append(groups, event.Composed{Event: ev, Count: 1})
	}
	return groups, nil
}
