package pld

import (
	"fmt"
	"math"

	"github.com/shuffledp/shuffledp/internal/logmath"
)

// pmfTol is how far from 1 the sums of the probability mass functions
// given to FromPMFs may be (round-off of their computation).
const pmfTol = 1e-9

func checkPMFs(p, q []float64) error {
	if len(p) != len(q) {
		return fmt.Errorf("pld: p and q have %d and %d outcomes, want the same", len(p), len(q))
	}
	if len(p) == 0 {
		return fmt.Errorf("pld: p and q are empty")
	}
	sp, sq := 0.0, 0.0
	for i := range p {
		if !(p[i] >= 0 && p[i] <= 1) || !(q[i] >= 0 && q[i] <= 1) {
			return fmt.Errorf("pld: outcome %d has p = %v, q = %v, want probabilities in [0, 1]", i, p[i], q[i])
		}
		sp += p[i]
		sq += q[i]
	}
	if math.Abs(sp-1) > pmfTol || math.Abs(sq-1) > pmfTol {
		return fmt.Errorf("pld: p sums to %v and q to %v, want 1 (within %g)", sp, sq, pmfTol)
	}
	return nil
}

// pmfLoss returns the privacy loss log p/q of an outcome rounded up
// (hi) and down (lo); +inf where q = 0.
func pmfLoss(p, q float64) (hi, lo float64) {
	if q == 0 {
		return math.Inf(1), math.Inf(1)
	}
	lp, lq := logmath.Log(p), logmath.Log(q)
	l := lp - lq
	e := 4 * ulp * (math.Abs(lp) + math.Abs(lq) + math.Abs(l))
	return l + e, l - e
}

// lossRange returns grid indices covering the finite losses of the atoms.
func lossRange(h float64, losses ...float64) (lo, hi int) {
	mn, mx := math.Inf(1), math.Inf(-1)
	for _, l := range losses {
		if math.IsInf(l, 0) {
			continue
		}
		mn, mx = math.Min(mn, l), math.Max(mx, l)
	}
	if math.IsInf(mn, 1) {
		return 0, 1
	}
	return int(math.Floor(mn/h)) - 1, int(math.Ceil(mx/h)) + 1
}

// FromPMFs returns the bracket of the pair (P, Q) over a finite outcome
// set, on grid width h: the law under P of the privacy loss log P(o)/Q(o)
// (mass with Q(o) = 0 < P(o) goes to +inf, exactly; outcomes with
// P(o) = 0 carry no P-mass). It describes one direction: for add-remove
// neighbours build both (P, Q) and (Q, P) and take the larger epsilon
// after composing each; for replace-one use Symmetric. p and q must be
// probability vectors (sums within 1e-9 of 1).
func FromPMFs(p, q []float64, h float64) (Bracket, error) {
	if err := checkPMFs(p, q); err != nil {
		return Bracket{}, err
	}
	his, los := make([]float64, len(p)), make([]float64, len(p))
	for i := range p {
		if p[i] > 0 {
			his[i], los[i] = pmfLoss(p[i], q[i])
		} else {
			his[i], los[i] = math.Inf(-1), math.Inf(-1)
		}
	}
	lo, hi := lossRange(h, append(his, los...)...)
	bp, err := newBuilder(Pessimistic, h, lo, hi)
	if err != nil {
		return Bracket{}, err
	}
	bo, _ := newBuilder(Optimistic, h, lo, hi)
	for i := range p {
		if p[i] > 0 {
			bp.add(his[i], p[i])
			bo.add(los[i], p[i])
		}
	}
	return Bracket{Pess: bp.finish(), Opt: bo.finish()}, nil
}

// Symmetric returns the bracket of the symmetric pair built from the
// positive part of (P, Q): for every outcome with L = P(o)/Q(o) > 1, P-mass
// P(o) at loss log L and P-mass Q(o) at loss -log L, the rest at loss 0.
// For every b >= 1 its hockey-stick divergence H_b in both directions
// equals H_b(P||Q); hence it dominates every mechanism whose curves in
// both directions are bounded by H_b(P||Q) at b >= 1, in particular a
// replace-one mechanism whose pair (P, Q) dominates both orders of its
// neighbours at b >= 1 only (docs/proofs/pld.md). Outcomes with Q(o) = 0
// contribute P(o) at +inf. It fails when the positive part carries more
// than the whole mass (sum over L > 1 of P + Q > 1).
func Symmetric(p, q []float64, h float64) (Bracket, error) {
	if err := checkPMFs(p, q); err != nil {
		return Bracket{}, err
	}
	var his, los []cloneAtom
	infMass := 0.0
	used := 0.0
	maxL := 0.0
	for i := range p {
		if !(p[i] > q[i]) {
			continue
		}
		if q[i] == 0 {
			infMass += p[i]
			used += p[i]
			continue
		}
		lh, ll := pmfLoss(p[i], q[i])
		lq := logmath.Log(q[i])
		his = append(his, cloneAtom{logQ: lq, l: lh})
		los = append(los, cloneAtom{logQ: lq, l: math.Max(ll, 0)})
		used += p[i] + q[i]
		maxL = math.Max(maxL, lh)
	}
	if used > 1+pmfTol {
		return Bracket{}, fmt.Errorf("pld: the positive part of (p, q) carries mass %v > 1 (sum of p + q over outcomes with p > q): no symmetric pair", used)
	}
	top := int(math.Ceil(maxL/h)) + 1
	bp, err := newBuilder(Pessimistic, h, -top, top)
	if err != nil {
		return Bracket{}, err
	}
	bo, _ := newBuilder(Optimistic, h, -top, top)
	// Mass at +inf in both directions (P-only outcomes and their mirror
	// Q-only outcomes) uses its mass once in each distribution.
	bp.add(math.Inf(1), infMass)
	bo.add(math.Inf(1), infMass)
	symmetricFromPositive(bp, his, infMass)
	symmetricFromPositive(bo, los, infMass)
	return Bracket{Pess: bp.finish(), Opt: bo.finish()}, nil
}
