package event

import (
	"errors"
	"fmt"
	"math"

	"github.com/shuffledp/shuffledp/pld"
)

// RoutePLD is the privacy-loss-distribution route of Best: every event's
// dominating pair (package pld) composed by FFT; its value is the
// pessimistic (certified upper) end of the PLD interval.
const RoutePLD = "pld"

// BoundPLD is the `shuffledp account` --bound value of the PLD route.
const BoundPLD = "pld"

// ErrNoDominatingPair is wrapped by PLD for an event whose mechanism has no
// dominating pair implemented (the shuffle Gaussian mechanisms and the
// check-in variant: their bounds here are RDP curves).
var ErrNoDominatingPair = errors.New("no dominating pair is implemented for this mechanism (it has RDP bounds only)")

// PLDResult is the (epsilon, delta) interval of composed events by PLD:
// Upper (the pessimistic discretisation) is a guarantee; Lower (the
// optimistic one) is below the epsilon of the dominating pairs, so
// [Lower, Upper] brackets the discretisation error. It is not a lower
// bound on the mechanism's epsilon (the pairs dominate it): that is
// Certified's job.
type PLDResult struct {
	Lower, Upper float64
	Delta        float64
	// Grid is the privacy-loss grid width used.
	Grid float64
	// Rounds is the total count of the composed events.
	Rounds int64
}

// PLD accounts the composed events by their dominating pairs: the
// subsampled shuffle and the shuffle by the symmetric clone pair
// (replace-one; pld.Accountant.AddClone), the sampled Gaussian (Poisson
// rate, add-remove or zero-out, both orders; rate 1 is the Gaussian
// mechanism) by pld.Accountant.AddSampledGaussian. Events of other
// mechanisms give an error wrapping ErrNoDominatingPair. No rounds: 0.
func PLD(events []Composed, delta float64) (PLDResult, error) {
	if !(delta > 0 && delta < 1) {
		return PLDResult{}, fmt.Errorf("--delta must be in (0,1), got %g", delta)
	}
	rounds, err := countRounds(events)
	if err != nil {
		return PLDResult{}, err
	}
	out := PLDResult{Delta: delta, Rounds: rounds}
	var a pld.Accountant
	added := 0
	for _, c := range events {
		if err := c.Event.Validate(); err != nil {
			return PLDResult{}, err
		}
		if !hasPLD(c.Event) {
			return PLDResult{}, fmt.Errorf("--bound %s for %s: %w", BoundPLD, c.Event, ErrNoDominatingPair)
		}
		if c.Count == 0 {
			continue
		}
		if c.Count > math.MaxInt32 {
			return PLDResult{}, fmt.Errorf("--steps %d: too many rounds for the PLD route (at most %d per event)", c.Count, math.MaxInt32)
		}
		e, steps := c.Event, int(c.Count)
		switch {
		case IsLDP(e.Mechanism):
			if e.Eps0 == 0 {
				continue // the output does not depend on the data
			}
			err = a.AddClone(e.N, e.reports(), e.Eps0, steps)
		case e.Mechanism == SampledGaussian:
			err = a.AddSampledGaussian(e.Sigma, e.Rate, steps)
		}
		if err != nil {
			return PLDResult{}, fmt.Errorf("%s: %w", e, err)
		}
		added++
	}
	if added == 0 {
		return out, nil
	}
	g, err := a.AutoGrid()
	if err != nil {
		return PLDResult{}, err
	}
	iv, err := a.Epsilon(delta)
	if err != nil {
		return PLDResult{}, err
	}
	if math.IsNaN(iv.Upper) || math.IsInf(iv.Upper, 0) || iv.Upper < 0 || !(iv.Lower <= iv.Upper) {
		return PLDResult{}, fmt.Errorf("%s: internal error: PLD interval %v is not a finite non-negative interval", BoundPLD, iv)
	}
	out.Lower, out.Upper, out.Grid = math.Max(iv.Lower, 0), iv.Upper, g
	return out, nil
}

// hasPLD reports whether e's mechanism has a dominating pair in package pld.
func hasPLD(e Event) bool { return HasPLDRoute(e.Mechanism) }

// HasPLDRoute reports whether mechanism m has a PLD route (a dominating
// pair in package pld: the LDP shuffle mechanisms and the sampled
// Gaussian), which Best then compares with the others.
func HasPLDRoute(m string) bool { return IsLDP(m) || m == SampledGaussian }
