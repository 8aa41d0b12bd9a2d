package training

import (
	"context"
	"fmt"

	"github.com/shuffledp/shuffledp/shuffler"
)

// ledgerBudget is the shuffler.Budget of an in-process run: the trainer's
// in-memory Ledger, debited once per released round of exactly k reports
// (the mechanism the Ledger composes), refusing a round that would take
// epsilon past the target. A Debit repeated for the last round with the
// same digest is a no-op; another digest, or an older round, is an error.
//
// With mirror set it never refuses (another budget decided; the Ledger
// only keeps counting for the metrics).
type ledgerBudget struct {
	l      *Ledger
	k      int
	target float64
	mirror bool
	last   int64    // last round debited
	digest [32]byte // its digest
}

// Check implements shuffler.Checker.
func (b *ledgerBudget) Check(_ context.Context, r shuffler.Release) error {
	if b.mirror {
		return nil
	}
	if r.Reports != b.k {
		return fmt.Errorf("the in-memory ledger accounts batches of exactly k=%d reports, got %d", b.k, r.Reports)
	}
	return b.l.CheckNext(b.target)
}

// Debit implements shuffler.Budget.
func (b *ledgerBudget) Debit(ctx context.Context, r shuffler.Release) error {
	switch {
	case r.Round == b.last && r.Round > 0:
		if r.Digest != b.digest {
			return fmt.Errorf("round %d was debited for another batch", r.Round)
		}
		return nil
	case r.Round < b.last:
		return fmt.Errorf("round %d is older than the last round debited, %d", r.Round, b.last)
	}
	if err := b.Check(ctx, r); err != nil {
		return err
	}
	if err := b.l.ComposeRound(); err != nil {
		return err
	}
	b.last, b.digest = r.Round, r.Digest
	return nil
}

// chainBudget debits every budget in order, stopping at the first error.
type chainBudget []shuffler.Budget

func (c chainBudget) Debit(ctx context.Context, r shuffler.Release) error {
	for _, b := range c {
		if err := b.Debit(ctx, r); err != nil {
			return err
		}
	}
	return nil
}

// Check implements shuffler.Checker for the budgets that do.
func (c chainBudget) Check(ctx context.Context, r shuffler.Release) error {
	for _, b := range c {
		if ch, ok := b.(shuffler.Checker); ok {
			if err := ch.Check(ctx, r); err != nil {
				return err
			}
		}
	}
	return nil
}

// LastRound implements shuffler.LastRounder: the largest last round of the
// budgets that know one.
func (c chainBudget) LastRound(ctx context.Context, run string) (int64, error) {
	var last int64
	for _, b := range c {
		if lr, ok := b.(shuffler.LastRounder); ok {
			l, err := lr.LastRound(ctx, run)
			if err != nil {
				return 0, err
			}
			last = max(last, l)
		}
	}
	return last, nil
}
