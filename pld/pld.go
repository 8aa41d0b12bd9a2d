package pld

import (
	"errors"
	"fmt"
	"math"
)

// Side is the rounding direction of a discretised PLD.
type Side int

const (
	// Pessimistic PLDs dominate the true one: every Delta and Epsilon they
	// return is at least the true value (losses rounded up by
	// connect-the-dots, truncated tails moved up or to +inf, float
	// round-off added).
	Pessimistic Side = iota
	// Optimistic PLDs are dominated by the true one: every Delta and
	// Epsilon they return is at most the true value (a garbling onto the
	// grid, losses rounded down, truncated tails dropped, float round-off
	// subtracted).
	Optimistic
)

func (s Side) String() string {
	if s == Optimistic {
		return "optimistic"
	}
	return "pessimistic"
}

// PLD is a discretised privacy loss distribution: P-mass Mass[i] at the
// privacy loss (Lo+i)*h, and P-mass Inf at the loss +inf (outcomes that P
// gives and Q does not). For a pair (P, Q) the privacy loss of an outcome o
// is log P(o)/Q(o) and the PLD is its law under P; the hockey-stick
// divergence is
//
//	H_{e^eps}(P||Q) = Delta(eps) = Inf + sum_i Mass[i] (1 - e^(eps - l_i))_+
//
// and composing mechanisms convolves their PLDs (Koskela, Jälkö, Honkela,
// AISTATS 2020; Meiser & Mohammadi, CCS 2018; Zhu, Dong & Wang, AISTATS
// 2022, for dominating pairs and their composition).
//
// A PLD is either Pessimistic or Optimistic (see Side); the two sides of
// the same pair bracket its true Delta and Epsilon. The proof of every
// rounding step is in docs/proofs/pld.md. A PLD is immutable.
type PLD struct {
	side Side
	h    float64
	lo   int
	mass []float64
	inf  float64
	// relErr bounds the relative float error of every mass; absErr bounds
	// the absolute float error of the mass vector (FFT round-off, and on
	// the pessimistic side the mass truncated at the bottom of a tilted
	// PLD) in the tilted L1 norm sum_i |err_i| e^{tilt (l_i - ref)}
	// (the plain L1 norm when tilt = 0). Delta adds them on the
	// pessimistic side and subtracts them on the optimistic one (the
	// absolute part through errAt). See tilt.go.
	relErr, absErr float64
	// tilt >= 0 and ref define the norm of absErr; ref is meaningful only
	// when tilt > 0.
	tilt, ref float64
}

// Side returns the rounding direction.
func (p *PLD) Side() Side { return p.side }

// Grid returns the grid width h.
func (p *PLD) Grid() float64 { return p.h }

// Len returns the number of grid points kept.
func (p *PLD) Len() int { return len(p.mass) }

// InfMass returns the P-mass at the loss +inf (a lower bound on every
// Delta).
func (p *PLD) InfMass() float64 { return p.inf }

// ErrBounds returns the relative error bound on each mass and the absolute
// error bound of the mass vector, both from float round-off; they are
// already included in Delta and Epsilon. abs is an L1 bound when the PLD
// was composed untilted (Compose, SelfCompose) and a bound in the tilted
// norm of tilt.go otherwise (Accountant.Epsilon); Delta at eps charges it
// as errAt(eps).
func (p *PLD) ErrBounds() (rel, abs float64) { return p.relErr, p.absErr }

// Losses returns the smallest and largest finite loss kept.
func (p *PLD) Losses() (lo, hi float64) {
	return float64(p.lo) * p.h, float64(p.lo+len(p.mass)-1) * p.h
}

// Mean returns the mean of the finite part of the loss, sum Mass[i] l_i
// (a diagnostic; not rounded).
func (p *PLD) Mean() float64 {
	s := 0.0
	for i, m := range p.mass {
		s += m * float64(p.lo+i) * p.h
	}
	return s
}

// Delta returns the hockey-stick divergence H_{e^eps} of the pair this PLD
// describes: an upper bound of the true value on the pessimistic side, a
// lower bound on the optimistic side. eps may be negative.
func (p *PLD) Delta(eps float64) (float64, error) {
	if math.IsNaN(eps) {
		return 0, errors.New("pld: eps is NaN")
	}
	s := 0.0
	for i := len(p.mass) - 1; i >= 0; i-- {
		l := float64(p.lo+i) * p.h
		if l <= eps {
			break
		}
		s += p.mass[i] * -math.Expm1(eps-l)
	}
	return p.finishDelta(s, eps), nil
}

// finishDelta applies the error bounds and the infinite mass to the finite
// sum s at eps (computed with relative error at most len*ulp).
func (p *PLD) finishDelta(s, eps float64) float64 {
	n := float64(len(p.mass))
	e := p.errAt(eps)
	if p.side == Pessimistic {
		s *= 1 + p.relErr + (n+8)*ulp
		d := s + e + p.inf
		d *= 1 + 4*ulp
		return math.Min(1, d)
	}
	s *= 1 - p.relErr - (n+8)*ulp
	d := (s - e + p.inf) * (1 - 4*ulp)
	return math.Max(0, d)
}

const ulp = 0x1p-52

// ErrDeltaTooSmall is returned (wrapped) by Epsilon when delta is at most
// the PLD's mass at infinite loss (plus its error bound): no finite epsilon
// reaches it.
var ErrDeltaTooSmall = errors.New("pld: delta is not above the mass at infinite privacy loss")

// Epsilon returns the smallest eps >= 0 with Delta(eps) <= delta: an upper
// bound on the true epsilon on the pessimistic side (rounded up), a lower
// bound on the optimistic side (rounded down). delta must be in (0, 1).
// It fails (ErrDeltaTooSmall) only when no finite eps reaches delta: the
// mass at +inf (plus, for an untilted PLD, its absolute error bound) is at
// least delta.
func (p *PLD) Epsilon(delta float64) (float64, error) {
	if !(delta > 0 && delta < 1) {
		return 0, fmt.Errorf("pld: delta = %v, want 0 < delta < 1", delta)
	}
	// Delta(eps) = c1 * S(eps) + c0 +/- errAt(eps) with S the finite sum.
	n := float64(len(p.mass))
	var c1, c0 float64
	if p.side == Pessimistic {
		c1 = (1 + p.relErr + (n+8)*ulp) * (1 + 4*ulp)
		c0 = p.inf * (1 + 4*ulp)
		if p.tilt == 0 {
			c0 = (p.absErr + p.inf) * (1 + 4*ulp)
		}
	} else {
		c1 = (1 - p.relErr - (n+8)*ulp) * (1 - 4*ulp)
		c0 = p.inf * (1 - 4*ulp)
		if p.tilt == 0 {
			c0 = (p.inf - p.absErr) * (1 - 4*ulp)
		}
	}
	if c0 >= delta {
		if p.side == Optimistic {
			// The true Delta is at least c0 at every eps: no finite
			// epsilon reaches delta.
			return 0, fmt.Errorf("%w (optimistic mass %.3g at +inf >= delta %.3g)", ErrDeltaTooSmall, c0, delta)
		}
		return 0, fmt.Errorf("%w (mass %.3g at +inf >= delta %.3g)", ErrDeltaTooSmall, c0, delta)
	}
	eps := p.scan((delta - c0) / c1)
	if p.tilt > 0 && p.absErr > 0 {
		// The tilted error bound decreases in eps: charged at the first
		// estimate (below the answer on the pessimistic side, where it is
		// then at least its value at the answer), it gives a second one.
		e := p.errAt(math.Max(eps, 0)) * (1 + 4*ulp)
		if p.side == Pessimistic && c0+e < delta {
			eps = math.Max(eps, p.scan((delta-c0-e)/c1))
		} else if p.side == Optimistic {
			eps = p.scan((delta - c0 + e) / c1)
		}
	}
	if math.IsInf(eps, -1) {
		eps = 0
	}
	return p.settle(eps, delta)
}

// scan returns the smallest eps with S(eps) <= target, S the finite sum of
// Delta, computed in closed form per grid segment (-Inf when S is below
// target everywhere).
func (p *PLD) scan(target float64) float64 {
	// Scan from the top: on [l_{j-1}, l_j] with A = sum_{i>=j} m_i and
	// B = sum_{i>=j} m_i e^{l_j - l_i}, S(eps) = A - e^{eps-l_j} B.
	A, B := 0.0, 0.0
	eh := math.Exp(-p.h)
	for j := len(p.mass) - 1; j >= 0; j-- {
		B = B*eh + p.mass[j]
		A += p.mass[j]
		if j > 0 && A-B*eh <= target {
			continue // S(l_{j-1}) <= target: the answer is further down
		}
		if A > target {
			return float64(p.lo+j)*p.h + math.Log((A-target)/B)
		}
		break
	}
	return math.Inf(-1)
}

// settle turns the estimate eps into a checked answer: on the pessimistic
// side the smallest eps found with Delta(eps) <= delta, raised from the
// estimate by the round-off slack of the scan and then, if a direct
// evaluation of Delta disagrees, by doubling steps and a bisection back;
// on the optimistic side the largest eps found (>= 0) with
// Delta(eps) >= delta, or 0, lowered the same way. Every returned value
// passed the direct evaluation.
func (p *PLD) settle(eps, delta float64) (float64, error) {
	n := float64(len(p.mass))
	mag := math.Abs(eps) + p.h + math.Abs(float64(p.lo)*p.h) + math.Abs(float64(p.lo+len(p.mass))*p.h)
	slack := (n+16)*ulp*mag + 1e-15
	pess := p.side == Pessimistic
	ok := func(e float64) bool {
		d, _ := p.Delta(e)
		if pess {
			return d <= delta
		}
		return d >= delta || e <= 0
	}
	dir := 1.0
	if !pess {
		dir = -1
	}
	eps += dir * slack
	if !pess && eps <= 0 {
		return 0, nil
	}
	if ok(eps) {
		return math.Max(0, eps), nil
	}
	// Step away until the check passes, then bisect between the last
	// failing and the passing point.
	bad := eps
	step := math.Max(slack, 1e-12*(1+math.Abs(eps)))
	good := math.NaN()
	for range 200 {
		e := bad + dir*step
		if !pess && e <= 0 {
			good = 0
			break
		}
		if ok(e) {
			good = e
			break
		}
		bad = e
		step *= 2
	}
	if math.IsNaN(good) {
		return 0, fmt.Errorf("pld: no epsilon with Delta <= %g found near %g (%v side)", delta, eps, p.side)
	}
	for range 64 {
		mid := bad + (good-bad)/2
		if mid == bad || mid == good {
			break
		}
		if ok(mid) {
			good = mid
		} else {
			bad = mid
		}
	}
	return math.Max(0, good), nil
}

// Interval is the pair of epsilons (or deltas) of the optimistic and the
// pessimistic PLD of the same dominating pair: Lower <= true <= Upper,
// where "true" is the exact value of the (composed) dominating pair. Upper
// is a valid privacy guarantee; Lower is a lower bound on what this pair
// can certify (and a lower bound on the mechanism's own epsilon only when
// the pair is attained by the mechanism).
type Interval struct {
	Lower, Upper float64
}

// Width returns Upper - Lower.
func (iv Interval) Width() float64 { return iv.Upper - iv.Lower }

// RelWidth returns (Upper - Lower)/Upper, 0 when Upper is 0.
func (iv Interval) RelWidth() float64 {
	if iv.Upper == 0 {
		return 0
	}
	return (iv.Upper - iv.Lower) / iv.Upper
}

func (iv Interval) String() string { return fmt.Sprintf("[%.6g, %.6g]", iv.Lower, iv.Upper) }
