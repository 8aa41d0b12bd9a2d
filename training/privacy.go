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

// Round is the public configuration of a round of the run that released
// a batch of reports reports: what event.RoundEvent, which the networked
// shuffler calls too, turns into the round's privacy event.
func (c *Config) Round(reports int) event.Round {
	return event.Round{Randomizer: c.Randomizer, Participation: c.Participation, N: int64(c.Clients),
		Reports: int64(reports), Eps0: c.Eps0, Sigma: c.Sigma, Rate: c.Rate, Adjacency: c.Adjacency}
}

// roundEvent is the privacy event of releasing a batch of reports reports
// (event.Round.Event: the zero Event, which no ledger debits, for a
// configuration without one).
func (c *Config) roundEvent(reports int) event.Event { return c.Round(reports).Event() }

// RoundEvent is the privacy event of one round of the run (k = Sample; in
// simulation every released batch of a k-of-n run has exactly k reports),
// or the zero Event for a run without one (randomizer none).
func (c *Config) RoundEvent() event.Event { return c.roundEvent(c.Sample) }

// LedgerOptions are the accounting parameters of cfg's run: its delta, its
// target epsilon and its bound ("best", or the opt-in best-conjecture),
// which the ledger records.
func (c *Config) LedgerOptions() ledger.Options {
	return ledger.Options{Delta: c.Delta, Target: c.TargetEpsilon, Bound: c.Bound}
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
