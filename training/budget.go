package training

import (
	"context"

	"github.com/shuffledp/shuffledp/shuffler"
)

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
