package pld

import "fmt"

// Bracket holds the pessimistic and the optimistic PLD of the same pair on
// the same grid: Opt.Delta(eps) <= true Delta(eps) <= Pess.Delta(eps), and
// likewise for Epsilon. The width of the bracket is the discretisation
// (and truncation, and round-off) error, reported rather than estimated.
type Bracket struct {
	Pess, Opt *PLD
}

// Grid returns the grid width.
func (b Bracket) Grid() float64 { return b.Pess.h }

// Compose composes two brackets side by side.
func (b Bracket) Compose(c Bracket) (Bracket, error) {
	p, err := b.Pess.Compose(c.Pess)
	if err != nil {
		return Bracket{}, err
	}
	o, err := b.Opt.Compose(c.Opt)
	if err != nil {
		return Bracket{}, err
	}
	return Bracket{Pess: p, Opt: o}, nil
}

// SelfCompose returns the steps-fold composition of both sides.
func (b Bracket) SelfCompose(steps int) (Bracket, error) {
	if steps < 1 {
		return Bracket{}, fmt.Errorf("pld: steps = %d, want >= 1", steps)
	}
	p, err := b.Pess.SelfCompose(steps)
	if err != nil {
		return Bracket{}, err
	}
	o, err := b.Opt.SelfCompose(steps)
	if err != nil {
		return Bracket{}, err
	}
	return Bracket{Pess: p, Opt: o}, nil
}

// Epsilon returns [optimistic, pessimistic] epsilons at delta. Upper is
// the certified bound.
func (b Bracket) Epsilon(delta float64) (Interval, error) {
	u, err := b.Pess.Epsilon(delta)
	if err != nil {
		return Interval{}, err
	}
	l, err := b.Opt.Epsilon(delta)
	if err != nil {
		// The optimistic side can only fail where the pessimistic one
		// already did; keep the interval usable.
		l = 0
	}
	return Interval{Lower: min(l, u), Upper: u}, nil
}

// Delta returns [optimistic, pessimistic] deltas at eps.
func (b Bracket) Delta(eps float64) (Interval, error) {
	u, err := b.Pess.Delta(eps)
	if err != nil {
		return Interval{}, err
	}
	l, err := b.Opt.Delta(eps)
	if err != nil {
		return Interval{}, err
	}
	return Interval{Lower: min(l, u), Upper: u}, nil
}
