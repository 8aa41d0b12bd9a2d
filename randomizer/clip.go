package randomizer

import (
	"fmt"
	"math"
)

// Norm names the norm of a randomizer's input ball.
type Norm int

const (
	// NormNone marks categorical inputs (RR, k-RR): no clipping applies.
	NormNone Norm = iota
	// NormL1 is the l_1 norm, sum |x_i| (R_1).
	NormL1
	// NormL2 is the Euclidean norm (R_2, Gaussian).
	NormL2
	// NormLinf is the max norm, max |x_i| (R_inf).
	NormLinf
)

// String returns "none", "l1", "l2" or "linf".
func (n Norm) String() string {
	switch n {
	case NormNone:
		return "none"
	case NormL1:
		return "l1"
	case NormL2:
		return "l2"
	case NormLinf:
		return "linf"
	}
	return fmt.Sprintf("Norm(%d)", int(n))
}

// ParseNorm is the inverse of Norm.String.
func ParseNorm(s string) (Norm, error) {
	switch s {
	case "none":
		return NormNone, nil
	case "l1":
		return NormL1, nil
	case "l2":
		return NormL2, nil
	case "linf":
		return NormLinf, nil
	}
	return 0, fmt.Errorf("norm must be one of none, l1, l2, linf, got %q", s)
}

// ClipL1 scales x in place onto the l_1 ball of radius c when ||x||_1 > c
// (x ← x·c/||x||_1, the clipping of Abadi et al. 2016 in the l_1 norm) and
// returns the original norm ||x||_1. c must be > 0.
func ClipL1(x []float64, c float64) float64 {
	n := l1Norm(x)
	scaleDown(x, n, c)
	return n
}

// ClipL2 scales x in place onto the Euclidean ball of radius c when
// ||x||_2 > c and returns the original norm ||x||_2 (computed with scaling,
// so it neither overflows nor underflows).
func ClipL2(x []float64, c float64) float64 {
	n := l2Norm(x)
	scaleDown(x, n, c)
	return n
}

// ClipLinf clamps every coordinate of x in place into [−c, c] and returns
// the original ||x||_inf. Clamping is the Euclidean projection onto the l_inf
// ball; unlike ClipL1 and ClipL2 it changes the direction of x. (NeurIPS'21
// Algorithm 1 instead scales, g ← g/max(1, ||g||_inf/C): ScaleLinf; both
// land in B_inf(C), the domain R_inf requires — choose by the optimisation
// analysis you rely on.) A vector with a NaN entry is zeroed, as in ClipL1 and
// ClipL2.
func ClipLinf(x []float64, c float64) float64 {
	n := linfNorm(x)
	if math.IsNaN(n) {
		clear(x)
		return n
	}
	if n <= c {
		return n
	}
	for i, v := range x {
		if v > c {
			x[i] = c
		} else if v < -c {
			x[i] = -c
		}
	}
	return n
}

// ScaleLinf scales x in place onto the l_inf ball of radius c when
// ||x||_inf > c, x ← x/max(1, ||x||_inf/c) (NeurIPS'21 Algorithm 1, line 6,
// in the l_inf norm), and returns the original ||x||_inf. Unlike ClipLinf it
// keeps the direction of x. A vector with a NaN or infinite entry is zeroed,
// as in ClipL1 and ClipL2. c must be > 0.
func ScaleLinf(x []float64, c float64) float64 {
	n := linfNorm(x)
	scaleDown(x, n, c)
	return n
}

// Clip clips x in place onto the ball of radius c in norm n and returns the
// original norm. NormNone leaves x untouched and returns 0.
func Clip(n Norm, x []float64, c float64) float64 {
	switch n {
	case NormL1:
		return ClipL1(x, c)
	case NormL2:
		return ClipL2(x, c)
	case NormLinf:
		return ClipLinf(x, c)
	}
	return 0
}

// scaleDown multiplies x by c/n when n > c. NaN or infinite norms zero the
// vector (a gradient that overflowed carries no usable direction, and
// zeroing keeps it in the ball).
func scaleDown(x []float64, n, c float64) {
	if math.IsNaN(n) || math.IsInf(n, 0) {
		clear(x)
		return
	}
	if n <= c {
		return
	}
	s := c / n
	for i := range x {
		x[i] *= s
	}
}

// l2Norm returns the Euclidean norm of x. The fast path sums squares in
// four accumulators; when that sum overflows, underflows towards the
// subnormal range or is not finite, it falls back to the scaled
// accumulation of LAPACK's dnrm2, which cannot overflow.
func l2Norm(x []float64) float64 {
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		s0 += x[i] * x[i]
		s1 += x[i+1] * x[i+1]
		s2 += x[i+2] * x[i+2]
		s3 += x[i+3] * x[i+3]
	}
	for ; i < len(x); i++ {
		s0 += x[i] * x[i]
	}
	s := (s0 + s1) + (s2 + s3)
	if s > 0x1p-900 && s < 0x1p900 {
		return math.Sqrt(s)
	}
	if s == 0 && allZero(x) {
		return 0
	}
	return l2NormScaled(x)
}

func allZero(x []float64) bool {
	for _, v := range x {
		if v != 0 {
			return false
		}
	}
	return true
}

// l2NormScaled is dnrm2's overflow-free accumulation (also propagates NaN).
func l2NormScaled(x []float64) float64 {
	var scale, ssq float64 = 0, 1
	for _, v := range x {
		if math.IsNaN(v) {
			return math.NaN()
		}
		if v == 0 {
			continue
		}
		a := math.Abs(v)
		if scale < a {
			ssq = 1 + ssq*(scale/a)*(scale/a)
			scale = a
		} else {
			ssq += (a / scale) * (a / scale)
		}
	}
	return scale * math.Sqrt(ssq)
}

// l1Norm returns sum |x_i| (NaN if any entry is NaN).
func l1Norm(x []float64) float64 {
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		s0 += math.Abs(x[i])
		s1 += math.Abs(x[i+1])
		s2 += math.Abs(x[i+2])
		s3 += math.Abs(x[i+3])
	}
	for ; i < len(x); i++ {
		s0 += math.Abs(x[i])
	}
	return (s0 + s1) + (s2 + s3)
}

// linfNorm returns max |x_i|, or NaN if any entry is NaN. It takes the
// maximum of the IEEE-754 bit patterns with the sign cleared: for
// non-negative floats the bit patterns order like the values, and every NaN
// pattern exceeds +Inf's, so one integer max (no float branches) suffices.
func linfNorm(x []float64) float64 {
	const absMask = 1<<63 - 1
	var m0, m1, m2, m3 uint64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		m0 = max(m0, math.Float64bits(x[i])&absMask)
		m1 = max(m1, math.Float64bits(x[i+1])&absMask)
		m2 = max(m2, math.Float64bits(x[i+2])&absMask)
		m3 = max(m3, math.Float64bits(x[i+3])&absMask)
	}
	for ; i < len(x); i++ {
		m0 = max(m0, math.Float64bits(x[i])&absMask)
	}
	m := max(max(m0, m1), max(m2, m3))
	if m > 0x7ff0000000000000 {
		return math.NaN()
	}
	return math.Float64frombits(m)
}

// domainSlack is the relative tolerance with which Randomize accepts an
// input whose norm exceeds the radius: clipping by x·c/||x|| can leave the
// recomputed norm a few ulps above c. Privacy does not depend on it — every
// randomizer clamps its coin probabilities into the eps0-LDP range.
const domainSlack = 1e-9

// checkDomain verifies len(x) == d, that x is finite, and ||x||_norm ≤
// c(1+domainSlack).
func checkDomain(x []float64, d int, n Norm, c float64) error {
	if len(x) != d {
		return fmt.Errorf("%w: input has length %d, want dim %d", ErrDomain, len(x), d)
	}
	var v float64
	switch n {
	case NormL1:
		v = l1Norm(x)
	case NormL2:
		v = l2Norm(x)
	case NormLinf:
		v = linfNorm(x)
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("%w: input has a NaN or infinite entry", ErrDomain)
	}
	if v > c*(1+domainSlack) {
		return fmt.Errorf("%w: %v norm %g exceeds radius %g (clip first)", ErrDomain, n, v, c)
	}
	return nil
}
