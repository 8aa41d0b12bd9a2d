package ledger

import (
	"context"
	"fmt"
	"slices"

	"github.com/shuffledp/shuffledp/accounting"
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
	// Bound names the RDP bound composed; Winner, under "best", names the
	// bound attaining it: the RDP component at Order (several,
	// comma-separated, when the events' curves are won by different
	// components), or, when the RDP epsilon exceeds the target, another
	// route's bound of event.Best (Order 0).
	Bound  string `json:"bound"`
	Winner string `json:"winning_bound,omitempty"`
	// Route is the route of event.Best attaining Epsilon (event.RouteRDP,
	// RouteApproxDP, RoutePLD); Order is 0 unless it is the RDP route.
	Route string `json:"route,omitempty"`
	// Assumption is non-empty (event.Assumption) when the epsilon rests on
	// the ICLR'23 Thm 1 worst-case pair (a Gaussian event not bounded by
	// gaussian-cor1).
	Assumption string `json:"assumption,omitempty"`
	// Adjacency is the neighbouring relation Epsilon is for
	// (event.Result.Adjacency: the events' effective adjacency; an event
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

// summary builds the Summary of b at delta.
//
// Under "best", where the RDP epsilon exceeds above (the ledger's target; 0
// means never), the epsilon is event.BestOf's over every route, exactly as
// the ledger's own Epsilon (book.guarantee).
func (b *book) summary(delta float64, withEntries bool, above float64) (Summary, error) {
	r, err := b.result(b.groups, delta, true)
	if err != nil {
		return Summary{}, err
	}
	if b.info.Bound == accounting.BoundBest && above > 0 && r.Epsilon > above {
		r = event.BestOf(b.groups, r, delta, event.RouteApproxDP).Result
	}
	s := Summary{
		Run: b.info.Run, Rounds: int64(len(b.entries)),
		Epsilon: r.Epsilon, Delta: delta, Order: r.Order, AtGridEdge: r.AtGridEdge, Conversion: r.Conversion,
		Bound: b.info.Bound, Winner: r.Winner, Assumption: r.Assumption, Adjacency: r.Adjacency,
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
	return l.book.summary(l.book.info.Delta, withEntries, l.target)
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
	return b.summary(delta, withEntries, 0)
}
