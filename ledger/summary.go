package ledger

import (
	"context"
	"fmt"
	"slices"

	"github.com/shuffledp/shuffledp/event"
)

// Summary describes a run's ledger for display (`shuffledp ledger show`).
type Summary struct {
	Run string `json:"run"`
	// Rounds is the number of rounds debited.
	Rounds int64 `json:"rounds"`
	// Epsilon is the run's epsilon at Delta over all its entries.
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
	// Order is the RDP order attaining Epsilon (0 before the first round).
	Order      float64 `json:"order"`
	AtGridEdge bool    `json:"at_grid_edge,omitempty"`
	Conversion string  `json:"conversion,omitempty"`
	// Bound is the run's bound (RunInfo.Bound: "best", "best-conjecture"
	// or a named RDP bound); Route and Winner name the route of
	// route.Best attaining Epsilon and the bound attaining it there (for
	// the RDP route the component(s) winning at Order; Order is 0 for the
	// other routes); EvaluatedAt is the Statement's (a costly route
	// evaluated at the run's checkpoint).
	Bound       string `json:"bound"`
	Winner      string `json:"winning_bound,omitempty"`
	Route       string `json:"route,omitempty"`
	EvaluatedAt int64  `json:"evaluated_at_rounds,omitempty"`
	// Conjecture is true when Epsilon rests on a conjecture (only under
	// "best-conjecture", or a conjectured bound named as the run's bound);
	// Assumption then states it (route.Assumption).
	Conjecture bool   `json:"conjecture,omitempty"`
	Assumption string `json:"assumption,omitempty"`
	// Orders is the run's RDP order grid (nil: the events' default).
	Orders []float64 `json:"orders,omitempty"`
	// Adjacency is the neighbouring relation Epsilon is for
	// (route.Result.Adjacency: the events' effective adjacency; an event
	// stored before the field existed has its legacy meaning); empty
	// before the first round.
	Adjacency string `json:"adjacency,omitempty"`
	// Events is the composition: the distinct events, in order of first
	// appearance, with their counts (summing to Rounds).
	Events []event.Composed `json:"events"`
	// Reports is the number of reports released over all rounds.
	Reports int64 `json:"reports"`
	// FirstRound and LastRound are the lowest and highest rounds debited
	// (-1 when none).
	FirstRound int64 `json:"first_round"`
	LastRound  int64 `json:"last_round"`
	// Entries lists every entry, when asked for.
	Entries []Entry `json:"entries,omitempty"`
}

// summary builds the Summary of b at delta: the ledger's Statement of its
// entries (book.current at the run's delta, book.statement at another).
func (b *book) summary(delta float64, withEntries bool) (Summary, error) {
	var st Statement
	var err error
	if delta == b.info.Delta {
		st, err = b.current(delta)
	} else {
		st, err = b.statement(b.groups, delta, true)
	}
	if err != nil {
		return Summary{}, err
	}
	s := Summary{
		Run: b.info.Run, Rounds: int64(len(b.entries)),
		Epsilon: st.Epsilon, Delta: delta, Order: st.Order, AtGridEdge: st.AtGridEdge, Conversion: st.Conversion,
		Bound: b.info.Bound, Winner: st.Winner, Route: st.Route, Conjecture: st.Conjecture, Assumption: st.Assumption,
		Adjacency: st.Adjacency, EvaluatedAt: st.EvaluatedAt, Orders: b.info.Orders,
		Events: slices.Clone(b.groups), FirstRound: -1, LastRound: -1,
	}
	if s.Events == nil {
		s.Events = []event.Composed{}
	}
	if len(b.entries) > 0 {
		s.FirstRound, s.LastRound = b.entries[0].Round, b.entries[len(b.entries)-1].Round
	}
	for _, e := range b.entries {
		s.Reports += int64(e.Reports)
	}
	if withEntries {
		s.Entries = slices.Clone(b.entries)
	}
	return s, nil
}

// Summary returns the run's summary at its delta.
func (l *Ledger) Summary(withEntries bool) (Summary, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.book.summary(l.book.info.Delta, withEntries)
}

// Summarize reads run from store and summarizes it without registering or
// writing anything. delta 0 means the run's own delta; another delta in
// (0, 1) converts the same composition at that delta.
func Summarize(ctx context.Context, store Store, run string, delta float64, withEntries bool) (Summary, error) {
	info, err := store.Run(ctx, run)
	if err != nil {
		return Summary{}, err
	}
	if delta == 0 {
		delta = info.Delta
	}
	if !(delta > 0 && delta < 1) {
		return Summary{}, fmt.Errorf("delta must be in (0,1), got %g", delta)
	}
	entries, err := store.Entries(ctx, run)
	if err != nil {
		return Summary{}, err
	}
	b := newBook(info)
	if err := b.load(entries); err != nil {
		return Summary{}, err
	}
	if int64(len(entries)) < info.Entries { // more is fine: appended since Run
		return Summary{}, fmt.Errorf("%w: run %q counts %d entries but has %d", ErrCorrupt, run, info.Entries, len(entries))
	}
	return b.summary(delta, withEntries)
}
