package ledger

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/shuffledp/shuffledp/accounting"
	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/internal/directed"
)

// Options are a run's accounting parameters.
type Options struct {
	// Delta is the run's delta, in (0, 1).
	Delta float64
	// Target is the target epsilon: a debit that would take epsilon past
	// it is refused. 0 means no target.
	Target float64
	// Bound is the run's bound, recorded with the run (RunInfo.Bound; a
	// ledger opened with another is refused): "" or "best" (the minimum
	// over every proven route, Statement), "best-conjecture" (the opt-in
	// minimum admitting the conjectured shuffle Gaussian bounds, its
	// epsilon labelled when a conjecture attains it), or a named RDP bound
	// (route.Curve), its RDP route alone.
	Bound string
	// Orders is the RDP order grid; nil means the default grid of
	// route.Epsilon for the run's events.
	Orders []float64
	// Fence, if not nil, fences every debit (Fence): the store must be a
	// Fencer, and a debit commits only while the fence's key is still at
	// its epoch, checked in the debit's transaction (ErrFenced otherwise,
	// nothing written). A shard's replica debits under its lease's fence.
	// Not a run parameter, like Target.
	Fence *Fence
}

// Ledger holds the privacy budget of one run on top of a Store. Every
// Debit prices the round's event over all the run's entries, refuses it if
// the run's (epsilon, delta) would exceed the target, and otherwise commits
// it to the store before returning. A Ledger is safe for concurrent use;
// several Ledgers (in several processes) may share a store, the store's
// (run, round) key deciding between them.
//
// The run's epsilon is its Statement: under the bound "best" (the
// default) the smallest over the routes of route.Best (RDP, the
// approximate-DP baselines of identical rounds, PLD), the RDP route on the
// run's own composition and the costly routes at its checkpoint (Checkpoint,
// statement.go), computed once per round; under "best-conjecture" the same
// with the conjectured shuffle Gaussian bounds admitted in the RDP route
// (labelled); under a named RDP bound, that bound's RDP route. For a run of
// at most 64 rounds of one event, and at every checkpoint, it is exactly
// what `shuffledp account --bound best` reports for that mechanism with
// --steps equal to the number of entries; between checkpoints at most one
// grid step above it.
type Ledger struct {
	store  Store
	target float64
	fence  *Fence
	now    func() time.Time

	mu   sync.Mutex
	book *book
}

// Open registers run in store with opts (or, for a run registered before,
// checks that opts agree with the registered delta, bound and orders: an
// error wrapping ErrRunMismatch names the first that differs) and loads its
// entries, so that a restarted process continues from every committed debit.
func Open(ctx context.Context, store Store, run string, opts Options) (*Ledger, error) {
	if math.IsNaN(opts.Target) || math.IsInf(opts.Target, 0) || opts.Target < 0 {
		return nil, fmt.Errorf("target epsilon must be a finite number >= 0 (0: none), got %g", opts.Target)
	}
	want, err := RunInfo{Run: run, Delta: opts.Delta, Bound: opts.Bound, Orders: opts.Orders}.normalize()
	if err != nil {
		return nil, err
	}
	got, err := store.Register(ctx, want)
	if err != nil {
		return nil, err
	}
	if p := sameParams(got, want); p != "" {
		return nil, fmt.Errorf("%w: run %q has %s", ErrRunMismatch, run, describeParam(p, got, want))
	}
	if opts.Fence != nil {
		if _, ok := store.(Fencer); !ok {
			return nil, fmt.Errorf("ledger of run %q: a fenced ledger needs a store that fences debits (SQLStore, MemoryStore), not %T", run, store)
		}
		f := *opts.Fence
		opts.Fence = &f
	}
	l := &Ledger{store: store, target: opts.Target, now: time.Now, book: newBook(got), fence: opts.Fence}
	if err := l.reload(ctx); err != nil {
		return nil, err
	}
	return l, nil
}

func describeParam(p string, got, want RunInfo) string {
	switch p {
	case "delta":
		return fmt.Sprintf("delta %g, not %g", got.Delta, want.Delta)
	case "bound":
		return fmt.Sprintf("bound %q, not %q", got.Bound, want.Bound)
	}
	return fmt.Sprintf("orders %v, not %v", got.Orders, want.Orders)
}

// reload replaces the book's entries by the store's.
func (l *Ledger) reload(ctx context.Context) error {
	entries, err := l.store.Entries(ctx, l.book.info.Run)
	if err != nil {
		return fmt.Errorf("loading run %q: %w", l.book.info.Run, err)
	}
	return l.book.load(entries)
}

// maxAttempts bounds Debit's reloads when other writers append to the run.
const maxAttempts = 8

// Debit records that round released a batch of reports whose SHA-256 is
// digest under the privacy event ev, and returns only when the entry is
// durable in the store. A round is debited once: a retry with the same
// event, report count and digest returns nil and writes nothing; a
// different entry for a debited round is an error wrapping ErrConflict.
// A new round must be above every debited round.
//
// Before writing, Debit composes ev with the run's entries; if the epsilon
// would exceed the target, it returns an error wrapping ErrBudgetExhausted
// and writes nothing: the caller must discard the batch.
func (l *Ledger) Debit(ctx context.Context, round int64, ev event.Event, reports int, digest [32]byte) error {
	_, err := l.debit(ctx, round, ev, reports, digest, func(e Entry, seen int64) (bool, [][16]byte, error) {
		if l.fence != nil {
			return l.store.(Fencer).AppendFenced(ctx, *l.fence, e, seen, false, nil)
		}
		existed, err := l.store.Append(ctx, e, seen)
		return existed, nil, err
	})
	return err
}

// DebitClaiming is Debit of a round whose reports carry the report IDs
// ids (ReportIDStore), claimed in the same write as the entry when the
// store is a ClaimAppender (SQLStore, MemoryStore: one commit, one fsync,
// per released round), or by ClaimReportIDs first otherwise. If any id is
// a replay (repeated in ids, or claimed under another round of the run),
// DebitClaiming returns them and an error wrapping ErrReplayed, and the
// round is not debited: the batch must be discarded. With a ClaimAppender
// nothing at all is written then, ids included; a round refused for its
// budget, a conflict or a stale view records none of its ids either.
//
// A ClaimAppender's debit of round also deletes the ids of the rounds
// below it (closed rounds, whose reports open at the server for no later
// round), so a released round costs the same however long the run: the
// check refuses an id of this round or of the last debited round, and a
// report of an older round is refused by the server's opening instead
// (docs/report-ids.md).
func (l *Ledger) DebitClaiming(ctx context.Context, round int64, ev event.Event, reports int, digest [32]byte, ids [][16]byte) ([][16]byte, error) {
	rs, ok := l.store.(ReportIDStore)
	if !ok {
		return nil, fmt.Errorf("debit run %q round %d: the store keeps no report IDs", l.Run(), round)
	}
	if l.fence != nil {
		return l.debit(ctx, round, ev, reports, digest, func(e Entry, seen int64) (bool, [][16]byte, error) {
			return l.store.(Fencer).AppendFenced(ctx, *l.fence, e, seen, true, ids)
		})
	}
	ca, ok := l.store.(ClaimAppender)
	if !ok {
		replays, err := rs.ClaimReportIDs(ctx, l.Run(), round, ids)
		if err != nil {
			return nil, err
		}
		if replays != nil {
			return replays, fmt.Errorf("%w: %d report IDs of run %q round %d", ErrReplayed, len(replays), l.Run(), round)
		}
		return nil, l.Debit(ctx, round, ev, reports, digest)
	}
	return l.debit(ctx, round, ev, reports, digest, func(e Entry, seen int64) (bool, [][16]byte, error) {
		return ca.AppendClaiming(ctx, e, seen, ids)
	})
}

// debit is Debit and DebitClaiming, appending with write.
func (l *Ledger) debit(ctx context.Context, round int64, ev event.Event, reports int, digest [32]byte,
	write func(e Entry, seen int64) (existed bool, replays [][16]byte, err error)) ([][16]byte, error) {
	ev = canonical(ev)
	l.mu.Lock()
	defer l.mu.Unlock()
	e := Entry{Run: l.book.info.Run, Round: round, Event: ev, Reports: reports, Digest: digest, Time: l.now().Round(0).UTC()}
	if err := e.Validate(); err != nil {
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		if i, ok := l.book.byRound[round]; ok {
			if old := l.book.entries[i]; !old.same(e) {
				return nil, conflictError(old, e)
			}
			return nil, nil
		}
		if last := l.book.last(); round <= last {
			return nil, fmt.Errorf("round %d is not above the last debited round %d of run %q", round, last, e.Run)
		}
		if err := l.checkNext(ev); err != nil {
			return nil, err // refused, or an event the ledger cannot price: never debited
		}
		existed, replays, err := write(e, int64(len(l.book.entries)))
		switch {
		case err == nil && replays != nil:
			return replays, fmt.Errorf("%w: %d report IDs of run %q round %d", ErrReplayed, len(replays), e.Run, round)
		case err == nil && !existed:
			return nil, l.book.add(e)
		case (err == nil && existed) || errors.Is(err, ErrStale):
			// Another writer appended to the run: price again on its entries.
			if attempt == maxAttempts {
				return nil, fmt.Errorf("debit run %q round %d: the run kept changing under %d attempts: %w", e.Run, round, attempt, ErrStale)
			}
			if err := l.reload(ctx); err != nil {
				return nil, err
			}
		default:
			return nil, err
		}
	}
}

// next returns the statement after one more occurrence of ev (not
// explained: only its epsilon decides).
func (l *Ledger) next(ev event.Event) (Statement, error) {
	groups, err := l.book.with(ev)
	if err != nil {
		return Statement{}, err
	}
	return l.book.statement(groups, l.book.info.Delta, false)
}

// NextEpsilon returns the (epsilon, delta) guarantee the run would have
// after debiting ev once more.
func (l *Ledger) NextEpsilon(ev event.Event) (accounting.Guarantee, error) {
	ev = canonical(ev)
	if err := ev.Validate(); err != nil {
		return accounting.Guarantee{}, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	s, err := l.next(ev)
	return s.Guarantee, err
}

// CheckNext returns an error wrapping ErrBudgetExhausted if debiting ev
// once more would take epsilon past the target (nil when there is no
// target), without debiting: a shuffler asks before it samples a round, so
// that no client works for a batch that could not be released. Debit
// still decides.
func (l *Ledger) CheckNext(ev event.Event) error {
	ev = canonical(ev)
	if err := ev.Validate(); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.checkNext(ev)
}

func (l *Ledger) checkNext(ev event.Event) error {
	if err := l.book.sameAdjacency(ev); err != nil {
		return err
	}
	if l.target == 0 {
		_, err := l.book.curve(ev)
		return err
	}
	g, err := l.next(ev)
	if err != nil {
		return err
	}
	if g.Epsilon > l.target {
		return fmt.Errorf("%w (run %q: epsilon after %d rounds would be %s > %g)",
			ErrBudgetExhausted, l.book.info.Run, len(l.book.entries)+1, directed.Upper(g.Epsilon, directed.Digits), l.target)
	}
	return nil
}

// Epsilon returns the run's (epsilon, delta) guarantee over all its
// entries (epsilon 0 at order 0 before the first, as route.Epsilon): its
// Statement's.
func (l *Ledger) Epsilon() (accounting.Guarantee, error) {
	s, err := l.Statement()
	return s.Guarantee, err
}

// Statement returns the run's statement over all its entries: its
// epsilon, the route and bound attaining it and whether it rests on a
// conjecture, computed once per number of entries.
func (l *Ledger) Statement() (Statement, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.book.current(l.book.info.Delta)
}

// CostlyEvaluations returns how many times this ledger evaluated the
// costly routes (approximate DP, PLD) of a checkpoint composition.
func (l *Ledger) CostlyEvaluations() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.book.costlyEvals
}

// Rounds returns the number of rounds debited.
func (l *Ledger) Rounds() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return int64(len(l.book.entries))
}

// LastRound returns the highest round debited, or -1.
func (l *Ledger) LastRound() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.book.last()
}

// Entry returns the entry of round, if it was debited.
func (l *Ledger) Entry(round int64) (Entry, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i, ok := l.book.byRound[round]
	if !ok {
		return Entry{}, false
	}
	return l.book.entries[i], true
}

// Entries returns the run's entries in round order.
func (l *Ledger) Entries() []Entry {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.book.entries)
}

// Events returns the composition: the run's distinct events, in order of
// first appearance, with their counts.
func (l *Ledger) Events() []event.Composed {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.book.groups)
}

// Info returns the run's registered parameters.
func (l *Ledger) Info() RunInfo {
	l.mu.Lock()
	defer l.mu.Unlock()
	info := l.book.info
	info.Orders = slices.Clone(info.Orders)
	info.Entries = int64(len(l.book.entries))
	return info
}

// Run returns the run's id.
func (l *Ledger) Run() string { return l.book.info.Run }

// Target returns the target epsilon (0: none).
func (l *Ledger) Target() float64 { return l.target }

// Reload reads the run's entries from the store again (to see another
// process's debits).
func (l *Ledger) Reload(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.reload(ctx)
}
