package route

import (
	"errors"
	"fmt"
	"math"

	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/pld"
)

// RoutePLD is the privacy-loss-distribution route of Best: every event's
// dominating pair (package pld) composed by FFT; its value is the
// pessimistic (certified upper) end of the PLD interval.
const RoutePLD = "pld"

// BoundPLD is the `shuffledp account` --bound value of the PLD route.
const BoundPLD = "pld"

// ErrNoDominatingPair is wrapped by PLD for an event whose mechanism has no
// dominating pair implemented.
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
// mechanism) by pld.Accountant.AddSampledGaussian, the shuffle Gaussian
// mechanisms by their proven pairs (addShuffleGaussian). Events of other
// mechanisms give an error wrapping ErrNoDominatingPair. No rounds: 0.
//
// Results are memoised (pldMemo): `shuffledp account` asks for the same
// composition up to three times (best, pld, certified).
func PLD(events []event.Composed, delta float64) (PLDResult, error) {
	if !(delta > 0 && delta < 1) {
		return PLDResult{}, fmt.Errorf("--delta must be in (0,1), got %g", delta)
	}
	key := pldKey(events, delta)
	if r, ok := pldMemo.get(key); ok {
		return r, nil
	}
	r, err := pldCompute(events, delta)
	if err == nil {
		pldMemo.put(key, r)
	}
	return r, err
}

func pldCompute(events []event.Composed, delta float64) (PLDResult, error) {
	rounds, err := countRounds(events)
	if err != nil {
		return PLDResult{}, err
	}
	out := PLDResult{Delta: delta, Rounds: rounds}
	var a pld.Accountant
	added := 0
	var coarse int64 // rounds of subsampled or check-in Gaussian pairs
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
		case event.IsLDP(e.Mechanism):
			if e.Eps0 == 0 {
				continue // the output does not depend on the data
			}
			err = a.AddClone(e.N, e.Reports(), e.Eps0, steps)
		case e.Mechanism == event.SampledGaussian:
			err = a.AddSampledGaussian(e.Sigma, e.Rate, steps)
		case event.IsGaussian(e.Mechanism):
			err = addShuffleGaussian(&a, e, steps)
			if e.Mechanism != event.ShuffleGaussian && e.K != e.N {
				coarse += c.Count
			}
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
	if coarse >= coarseGridRounds {
		// Many rounds of a subsampled or check-in Gaussian pair: its loss
		// range is wide (tens of units) against a narrow per-round spread,
		// so the automatic grid has ~1e5 points a round and the FFT
		// round-off charged to +inf grows with rounds x points (at
		// ICLR'23 Fig. 1a, 86,400 rounds, it exceeds delta = 1e-5). A grid
		// 8 times coarser answers there in 0.4 s, within 0.2 of the
		// optimistic end. Any grid is pessimistic (connect-the-dots).
		g *= 8
		a.Grid = g
	}
	iv, err := a.Epsilon(delta)
	for try := 0; errors.Is(err, pld.ErrDeltaTooSmall) && try < 2; try++ {
		// The FFT round-off charged to +inf (it grows with the number of
		// grid points and the rounds) reached delta: a coarser grid has
		// fewer points. Connect-the-dots is pessimistic on every grid, so
		// the answer stays an upper bound; only the discretisation
		// interval widens.
		g *= 4
		a.Grid = g
		iv, err = a.Epsilon(delta)
	}
	if err != nil {
		return PLDResult{}, err
	}
	if math.IsNaN(iv.Upper) || math.IsInf(iv.Upper, 0) || iv.Upper < 0 || !(iv.Lower <= iv.Upper) {
		return PLDResult{}, fmt.Errorf("%s: internal error: PLD interval %v is not a finite non-negative interval", BoundPLD, iv)
	}
	out.Lower, out.Upper, out.Grid = math.Max(iv.Lower, 0), iv.Upper, g
	return out, nil
}

// coarseGridRounds is the number of rounds of subsampled or check-in
// Gaussian pairs from which PLD starts on a grid 8 times coarser than
// pld.Accountant.AutoGrid's.
const coarseGridRounds = 20000

// addShuffleGaussian adds steps rounds of a shuffle Gaussian event by its
// proven dominating pair (docs/proofs/shuffle-gaussian.md): the shuffled
// reports are a post-processing of the vector of reports, so
//   - shuffle-gaussian (and k = n): the Gaussian mechanism at s = sigma
//     (zero-out) or sigma/2 (replace-one), pld.AddGaussian;
//   - subsampled-shuffle-gaussian, k < n: the WOR-subsampled Gaussian pair
//     at sigma/2 for both adjacencies (the changed client against another
//     sampled one), rate k/n, pld.AddWORGaussian;
//   - checkin-gaussian: the changed client's slot, at s = sigma (zero-out)
//     or sigma/2 (replace-one), pld.AddCheckinGaussian.
func addShuffleGaussian(a *pld.Accountant, e event.Event, steps int) error {
	own := e.Sigma
	if e.EffectiveAdjacency() == event.AdjacencyReplaceOne {
		own = e.Sigma / 2
	}
	switch {
	case e.Mechanism == event.ShuffleGaussian || e.Mechanism == event.SubsampledShuffleGaussian && e.K == e.N:
		return a.AddGaussian(own, steps)
	case e.Mechanism == event.SubsampledShuffleGaussian:
		return a.AddWORGaussian(e.Sigma/2, float64(e.K)/float64(e.N), steps)
	case e.Mechanism == event.CheckinGaussian:
		return a.AddCheckinGaussian(own, e.Rate, steps)
	}
	return fmt.Errorf("%s: %w", e, ErrNoDominatingPair)
}

// hasPLD reports whether e's mechanism has a dominating pair in package pld.
func hasPLD(e event.Event) bool { return HasPLDRoute(e.Mechanism) }

// HasPLDRoute reports whether mechanism m has a PLD route (a dominating
// pair in package pld: the LDP shuffle mechanisms, the sampled Gaussian and
// the three shuffle Gaussian mechanisms), which Best then compares with the
// others.
func HasPLDRoute(m string) bool {
	return event.IsLDP(m) || m == event.SampledGaussian || event.IsGaussian(m)
}

// pldKey identifies a PLD query: the events in order (their %v form
// round-trips every float) and the bits of delta.
func pldKey(events []event.Composed, delta float64) string {
	return memoKey(events, delta, nil)
}

// pldMemo keeps the last few PLD results (a PLD composition costs 0.05 to
// 2 CPU-seconds; a result is a few numbers).
var pldMemo = newMemo[PLDResult](16)
