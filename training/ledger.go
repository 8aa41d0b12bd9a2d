package training

import (
	"errors"
	"fmt"
	"math"
)

// ErrBudgetExhausted is returned by Trainer.Step when composing one more
// round would make epsilon exceed the target epsilon.
var ErrBudgetExhausted = errors.New("target epsilon reached: the next round would exceed it")

// roundAccountant computes the (epsilon, delta)-DP guarantee of a number of
// identical rounds: the RDP curve of one round composed that many times
// and converted at delta. It returns the epsilon and the RDP order that
// attains it.
type roundAccountant interface {
	EpsilonAfter(rounds int, delta float64) (eps, order float64, err error)
}

// Ledger is the privacy ledger of a run: how many rounds have been composed
// and what they cost. Every round of Algorithm 1 is one subsampled shuffle
// mechanism (NeurIPS'21 eq. (3): k of n clients sampled without
// replacement, each applying an eps0-LDP randomizer, outputs shuffled), so
// the ledger composes the same per-round RDP curve once per round.
//
// For the non-private baseline the ledger counts rounds but reports no
// epsilon.
type Ledger struct {
	acct   roundAccountant // nil for --randomizer none
	delta  float64
	rounds int
	// cache of the last EpsilonAfter query
	cachedRounds    int
	cachedEps, cOrd float64
}

// NewLedger returns an empty ledger for cfg's mechanism: the `best`
// upper bound on the RDP of the subsampled shuffle mechanism with
// n = Clients, k = Sample and eps0 = Eps0.
func NewLedger(cfg Config) (*Ledger, error) {
	l := &Ledger{delta: cfg.Delta, cachedRounds: -1}
	if cfg.Randomizer == RandomizerNone {
		return l, nil
	}
	acct, err := newSubsampledShuffleAccountant(cfg.Clients, cfg.Sample, cfg.Eps0)
	if err != nil {
		return nil, err
	}
	l.acct = acct
	return l, nil
}

// Private reports whether the ledger carries a privacy guarantee.
func (l *Ledger) Private() bool { return l.acct != nil }

// Rounds returns the number of rounds composed.
func (l *Ledger) Rounds() int { return l.rounds }

// ComposeRound records one more round.
func (l *Ledger) ComposeRound() { l.rounds++ }

// epsilonAfter returns epsilon after r rounds (0 for r = 0), caching the
// last answer.
func (l *Ledger) epsilonAfter(r int) (float64, float64, error) {
	if r == 0 {
		return 0, math.NaN(), nil
	}
	if r == l.cachedRounds {
		return l.cachedEps, l.cOrd, nil
	}
	eps, order, err := l.acct.EpsilonAfter(r, l.delta)
	if err != nil {
		return 0, 0, fmt.Errorf("privacy accounting after %d rounds: %w", r, err)
	}
	if math.IsNaN(eps) || math.IsInf(eps, 0) || eps < 0 {
		return 0, 0, fmt.Errorf("privacy accounting after %d rounds returned epsilon %g", r, eps)
	}
	l.cachedRounds, l.cachedEps, l.cOrd = r, eps, order
	return eps, order, nil
}

// Epsilon returns the epsilon of all rounds composed so far at the run's
// delta, and the RDP order attaining it (NaN before the first round). It
// is an error to call it on a non-private ledger.
func (l *Ledger) Epsilon() (eps, order float64, err error) {
	if l.acct == nil {
		return 0, 0, errors.New("randomizer none: no privacy guarantee")
	}
	return l.epsilonAfter(l.rounds)
}

// CheckNext returns ErrBudgetExhausted if target > 0 and composing one more
// round would make epsilon exceed target. Epsilon is non-decreasing in the
// number of rounds, so stopping at the first such round keeps every
// reported epsilon within the target.
func (l *Ledger) CheckNext(target float64) error {
	if target <= 0 || l.acct == nil {
		return nil
	}
	eps, _, err := l.epsilonAfter(l.rounds + 1)
	if err != nil {
		return err
	}
	if eps > target {
		return fmt.Errorf("%w (epsilon after %d rounds would be %.6g > %g)", ErrBudgetExhausted, l.rounds+1, eps, target)
	}
	return nil
}
