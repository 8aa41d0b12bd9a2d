package shuffler

import (
	"context"
	"fmt"

	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/ledger"
)

// PointDebitedNotForwarded is the crash-test point (internal/faultpoint)
// between a round's debit and the forwarding of its batch.
const PointDebitedNotForwarded = "shuffler.debited-not-forwarded"

// LedgerBudget is the Budget of a run whose privacy ledger is a
// ledger.Ledger (durable with a SQLite or PostgreSQL store, or in memory
// for a throwaway simulation): Debit commits the round's event to the
// ledger, keyed (run, round), and returns only once it is durable, so the
// shuffler forwards a batch only after its cost is recorded.
//
// Round ids after a restart. A Service asks LastRound before its first
// round and continues after it, so that a round debited after the last
// checkpoint and before a crash never has its id reused for another batch:
// the replayed round gets a fresh id and is debited again (with fresh
// client noise it is a new release, and it is charged). With Replay set —
// a seeded simulation, whose replay after a restart from a checkpoint
// recomputes bit-identical batches — LastRound reports nothing, ids
// continue after the checkpoint's, and each replayed batch is recognised
// by the ledger (same run, round, event and digest: no second debit). A
// replayed batch that differs is an error wrapping ledger.ErrConflict, not
// a silent second release.
type LedgerBudget struct {
	// Ledger is the run's ledger; its run id must be the shuffler's.
	Ledger *ledger.Ledger
	// Event returns the privacy event of releasing a batch of reports
	// reports (for the subsampled shuffle: n, k = reports, eps0).
	Event func(reports int) event.Event
	// Replay is set for seeded simulation only (see the type's comment).
	Replay bool
}

func (b *LedgerBudget) check(r Release) error {
	if r.Run != b.Ledger.Run() {
		return fmt.Errorf("release of run %q, ledger of run %q", r.Run, b.Ledger.Run())
	}
	return nil
}

// Debit implements Budget.
func (b *LedgerBudget) Debit(ctx context.Context, r Release) error {
	if err := b.check(r); err != nil {
		return err
	}
	return b.Ledger.Debit(ctx, r.Round, b.Event(r.Reports), r.Reports, r.Digest)
}

// Check implements Checker: would the ledger accept one more event? A
// round at or below the ledger's last (a replay, Replay set) costs nothing
// new if it is identical, so it is not refused here; Debit decides.
func (b *LedgerBudget) Check(_ context.Context, r Release) error {
	if err := b.check(r); err != nil {
		return err
	}
	if b.Replay && r.Round > 0 && r.Round <= b.Ledger.LastRound() {
		return nil
	}
	return b.Ledger.CheckNext(b.Event(r.Reports))
}

// LastRound implements LastRounder.
func (b *LedgerBudget) LastRound(_ context.Context, run string) (int64, error) {
	if run != b.Ledger.Run() {
		return 0, fmt.Errorf("last round of run %q asked of the ledger of run %q", run, b.Ledger.Run())
	}
	if b.Replay {
		return 0, nil
	}
	return max(b.Ledger.LastRound(), 0), nil
}
