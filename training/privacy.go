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
//
// The Gaussian runs: randomizer gaussian with k of n sampled is the
// subsampled shuffle Gaussian mechanism (n, k = reports, sigma; ICLR'23
// submission Thm 2), with check-in the shuffled check-in Gaussian
// mechanism (n, rate, sigma; eq. (11)), whatever the realized batch size
// (the curve covers its distribution); central-gaussian is the
// Poisson-sampled Gaussian mechanism (rate, sigma; MTZ19), n recorded.
// The Gaussian events carry the run's Adjacency.
func (c *Config) roundEvent(reports int) event.Event {
	switch {
	case c.Randomizer == RandomizerCentralGaussian:
		return event.Event{Mechanism: event.SampledGaussian, N: int64(c.Clients), Rate: c.Rate, Sigma: c.Sigma, Adjacency: c.Adjacency}
	case c.Randomizer == RandomizerGaussian && c.Participation == ParticipationCheckIn:
		return event.Event{Mechanism: event.CheckinGaussian, N: int64(c.Clients), Rate: c.Rate, Sigma: c.Sigma, Adjacency: c.Adjacency}
	case c.Randomizer == RandomizerGaussian:
		return event.Event{Mechanism: event.SubsampledShuffleGaussian, N: int64(c.Clients), K: int64(reports), Sigma: c.Sigma, Adjacency: c.Adjacency}
	}
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
