package training

import (
	"context"
	"fmt"

	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/ledger"
)

// ErrBudgetExhausted is returned (wrapped) by Trainer.Step when the ledger
// refuses the round because composing it would make epsilon exceed the
// target epsilon. It is ledger.ErrBudgetExhausted.
var ErrBudgetExhausted = ledger.ErrBudgetExhausted

// roundEvent is the privacy event of releasing one batch of reports
// reports: the subsampled shuffle mechanism (NeurIPS'21 eq. (3)) with the
// run's n clients, k = reports sampled without replacement, and its eps0.
// In simulation every released batch has exactly k = Sample reports.
func (c *Config) roundEvent(reports int) event.Event {
	return event.Event{Mechanism: event.SubsampledShuffle, N: int64(c.Clients), K: int64(reports), Eps0: c.Eps0}
}

// RoundEvent is the privacy event of one round of the run (k = Sample).
func (c *Config) RoundEvent() event.Event { return c.roundEvent(c.Sample) }

// LedgerOptions are the accounting parameters of cfg's run: its delta, its
// target epsilon and the best upper bound.
func (c *Config) LedgerOptions() ledger.Options {
	return ledger.Options{Delta: c.Delta, Target: c.TargetEpsilon}
}

// OpenMemoryLedger returns a ledger for run over a fresh in-memory store
// with cfg's accounting parameters: enforced, not durable.
func OpenMemoryLedger(cfg Config, run string) (*ledger.Ledger, error) {
	l, err := ledger.Open(context.Background(), ledger.NewMemoryStore(), run, cfg.LedgerOptions())
	if err != nil {
		return nil, fmt.Errorf("privacy ledger: %w", err)
	}
	return l, nil
}
