package training

import (
	"errors"
	"fmt"
	"math"

	"github.com/shuffledp/shuffledp/accounting"
)

// ErrBudgetExhausted is returned by Trainer.Step when composing one more
// round would make epsilon exceed the target epsilon.
var ErrBudgetExhausted = errors.New("target epsilon reached: the next round would exceed it")

// Ledger is the privacy ledger of a run. Every round of Algorithm 1 is one
// subsampled shuffle mechanism (NeurIPS'21 eq. (3): k of n clients sampled
// without replacement, each applying an eps0-LDP randomizer, the k reports
// shuffled), so after every round the ledger composes that mechanism's RDP
// curve once more into an accounting.Accountant (which caches the curve on
// the order grid, so a round costs O(number of orders)), and converts the
// total to (epsilon, delta) on demand.
//
// A second accountant is kept one round ahead, so that the epsilon the
// next round would cost is known before the round runs (--target-epsilon).
//
// For the non-private baseline the ledger counts rounds but reports no
// epsilon.
type Ledger struct {
	curve  accounting.RDP
	acct   *accounting.Accountant // rounds compositions
	ahead  *accounting.Accountant // rounds+1 compositions
	delta  float64
	rounds int
}

// NewLedger returns an empty ledger for cfg's mechanism, composing
// subsampledShuffleCurve(n = Clients, k = Sample, eps0 = Eps0): the `best`
// upper bound.
func NewLedger(cfg Config) (*Ledger, error) {
	l := &Ledger{delta: cfg.Delta}
	if cfg.Randomizer == RandomizerNone {
		return l, nil
	}
	curve, err := subsampledShuffleCurve(cfg.Clients, cfg.Sample, cfg.Eps0)
	if err != nil {
		return nil, fmt.Errorf("privacy accounting: %w", err)
	}
	if l.curve, err = tabulate(curve); err != nil {
		return nil, fmt.Errorf("privacy accounting: %w", err)
	}
	if err := l.reset(0); err != nil {
		return nil, err
	}
	return l, nil
}

// reset rebuilds the accountants with rounds compositions, one at a time
// (exactly as a run that composed them round by round, so that a resumed
// run reports bit-identical epsilons).
func (l *Ledger) reset(rounds int) error {
	if l.curve == nil {
		l.rounds = rounds
		return nil
	}
	var err error
	if l.acct, err = accounting.NewAccountant(nil); err != nil {
		return err
	}
	if l.ahead, err = accounting.NewAccountant(nil); err != nil {
		return err
	}
	if err := l.ahead.Compose(l.curve, 1); err != nil {
		return fmt.Errorf("privacy accounting: %w", err)
	}
	if err := l.acct.Compose(l.curve, 0); err != nil { // evaluate and cache the curve
		return fmt.Errorf("privacy accounting: %w", err)
	}
	l.rounds = 0
	for range rounds {
		if err := l.ComposeRound(); err != nil {
			return err
		}
	}
	return nil
}

// Private reports whether the ledger carries a privacy guarantee.
func (l *Ledger) Private() bool { return l.curve != nil }

// Bound names the RDP bound composed ("" for the non-private baseline).
func (l *Ledger) Bound() string {
	if l.curve == nil {
		return ""
	}
	return l.curve.Name()
}

// Winner names the component bound that attains the `best` curve at order
// ("" when the curve is not a best curve or order is not usable).
func (l *Ledger) Winner(order float64) string {
	t, ok := l.curve.(*tabulatedCurve)
	if !ok {
		return ""
	}
	b, ok := t.src.(*accounting.BestCurve)
	if !ok || math.IsNaN(order) {
		return ""
	}
	_, name, err := b.RDPWinner(order)
	if err != nil {
		return ""
	}
	return name
}

// Rounds returns the number of rounds composed.
func (l *Ledger) Rounds() int { return l.rounds }

// ComposeRound records one more round.
func (l *Ledger) ComposeRound() error {
	if l.curve != nil {
		if err := l.acct.Compose(l.curve, 1); err != nil {
			return fmt.Errorf("privacy accounting: %w", err)
		}
		if err := l.ahead.Compose(l.curve, 1); err != nil {
			return fmt.Errorf("privacy accounting: %w", err)
		}
	}
	l.rounds++
	return nil
}

// guarantee converts a, checking the result.
func (l *Ledger) guarantee(a *accounting.Accountant, rounds int) (accounting.Guarantee, error) {
	g, err := a.Epsilon(l.delta)
	if err != nil {
		return g, fmt.Errorf("privacy accounting after %d rounds: %w", rounds, err)
	}
	if math.IsNaN(g.Epsilon) || math.IsInf(g.Epsilon, 0) || g.Epsilon < 0 {
		return g, fmt.Errorf("privacy accounting after %d rounds returned epsilon %g", rounds, g.Epsilon)
	}
	return g, nil
}

// Epsilon returns the (epsilon, delta) guarantee of all rounds composed so
// far at the run's delta (epsilon 0 before the first round), with the RDP
// order that attains it. It is an error to call it on a non-private
// ledger.
func (l *Ledger) Epsilon() (accounting.Guarantee, error) {
	if l.curve == nil {
		return accounting.Guarantee{}, errors.New("randomizer none: no privacy guarantee")
	}
	if l.rounds == 0 {
		return accounting.Guarantee{Epsilon: 0, Delta: l.delta, Order: math.NaN()}, nil
	}
	return l.guarantee(l.acct, l.rounds)
}

// NextEpsilon returns the epsilon after one more round.
func (l *Ledger) NextEpsilon() (float64, error) {
	if l.curve == nil {
		return 0, errors.New("randomizer none: no privacy guarantee")
	}
	g, err := l.guarantee(l.ahead, l.rounds+1)
	return g.Epsilon, err
}

// CheckNext returns ErrBudgetExhausted if target > 0 and composing one more
// round would make epsilon exceed target. Epsilon is non-decreasing in the
// number of rounds, so stopping at the first such round keeps every
// reported epsilon within the target.
func (l *Ledger) CheckNext(target float64) error {
	if target <= 0 || l.curve == nil {
		return nil
	}
	eps, err := l.NextEpsilon()
	if err != nil {
		return err
	}
	if eps > target {
		return fmt.Errorf("%w (epsilon after %d rounds would be %.6g > %g)", ErrBudgetExhausted, l.rounds+1, eps, target)
	}
	return nil
}
