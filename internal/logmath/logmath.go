// Package logmath provides numerically stable log-space primitives shared by
// the accountants: log-sum-exp, log binomial coefficients via Lgamma, and
// log(1±e^x). Every function is defined so that it never overflows for the
// magnitudes met in privacy accounting (orders in the thousands, eps0 up to
// ~10, populations up to 1e9).
package logmath

import "math"

// LogAddExp returns log(e^a + e^b) without overflow. -Inf is the identity.
func LogAddExp(a, b float64) float64 {
	if math.IsInf(a, -1) {
		return b
	}
	if math.IsInf(b, -1) {
		return a
	}
	if a < b {
		a, b = b, a
	}
	return a + math.Log1p(math.Exp(b-a))
}

// LogSubExp returns log(e^a - e^b) for a >= b. It returns -Inf when a == b
// and NaN when a < b (the difference is negative); callers must check.
func LogSubExp(a, b float64) float64 {
	if math.IsInf(b, -1) {
		return a
	}
	if a < b {
		return math.NaN()
	}
	if a == b {
		return math.Inf(-1)
	}
	return a + Log1mExp(b-a)
}

// LogSumExp returns log(sum_i e^{xs[i]}); -Inf for an empty slice.
func LogSumExp(xs []float64) float64 {
	m := math.Inf(-1)
	for _, x := range xs {
		if x > m {
			m = x
		}
	}
	if math.IsInf(m, 0) {
		return m
	}
	s := 0.0
	for _, x := range xs {
		s += math.Exp(x - m)
	}
	return m + math.Log(s)
}

// Log1pExp returns log(1 + e^x) accurately for all x.
func Log1pExp(x float64) float64 {
	switch {
	case x > 36:
		return x + math.Exp(-x)
	case x > -37:
		return math.Log1p(math.Exp(x))
	default:
		return math.Exp(x)
	}
}

// Log1mExp returns log(1 - e^x) for x <= 0 (Mächler 2012): accurate both
// near 0 and for very negative x. It returns -Inf at x == 0 and NaN for x > 0.
func Log1mExp(x float64) float64 {
	switch {
	case x > 0:
		return math.NaN()
	case x == 0:
		return math.Inf(-1)
	case x > -math.Ln2:
		return math.Log(-math.Expm1(x))
	default:
		return math.Log1p(-math.Exp(x))
	}
}

// LogGamma returns log|Gamma(x)|.
func LogGamma(x float64) float64 {
	v, _ := math.Lgamma(x)
	return v
}

// LogBinom returns log C(n, k) for real 0 <= k <= n; -Inf outside that
// range. It is computed as -log(n+1) - LogBeta(k+1, n-k+1) so that it stays
// accurate to a few ulps even when n is 1e9 and k is small, where the naive
// lgamma(n+1) - lgamma(k+1) - lgamma(n-k+1) loses six digits to cancellation.
func LogBinom(n, k float64) float64 {
	if k < 0 || k > n || math.IsNaN(n) || math.IsNaN(k) {
		return math.Inf(-1)
	}
	if k == 0 || k == n {
		return 0
	}
	return -math.Log1p(n) - LogBeta(k+1, n-k+1)
}

// LogBeta returns log B(a, b) = log Gamma(a) + log Gamma(b) - log Gamma(a+b)
// for a, b > 0, using Stirling-series corrections when an argument is large
// so that no cancellation between large lgamma values occurs (the same
// decomposition as in R's lbeta).
func LogBeta(a, b float64) float64 {
	p, q := math.Min(a, b), math.Max(a, b)
	const lnSqrt2Pi = 0.918938533204672741780329736406
	switch {
	case p >= 10:
		corr := stirlingCorrection(p) + stirlingCorrection(q) - stirlingCorrection(p+q)
		return -0.5*math.Log(q) + lnSqrt2Pi + corr + (p-0.5)*math.Log(p/(p+q)) + q*math.Log1p(-p/(p+q))
	case q >= 10:
		corr := stirlingCorrection(q) - stirlingCorrection(p+q)
		return LogGamma(p) + corr + p - p*math.Log(p+q) + (q-0.5)*math.Log1p(-p/(p+q))
	default:
		return LogGamma(p) + LogGamma(q) - LogGamma(p+q)
	}
}

// stirlingCorrection returns lgamma(x) - ((x-0.5)log x - x + log sqrt(2 pi))
// for x >= 10 from the Stirling series (error below 1e-17 at x = 10).
func stirlingCorrection(x float64) float64 {
	// Coefficients B_{2k} / (2k (2k-1)), k = 1..8.
	c := [...]float64{1.0 / 12, -1.0 / 360, 1.0 / 1260, -1.0 / 1680, 1.0 / 1188, -691.0 / 360360, 1.0 / 156, -3617.0 / 122400}
	x2 := 1 / (x * x)
	s := 0.0
	for i := len(c) - 1; i >= 0; i-- {
		s = s*x2 + c[i]
	}
	return s / x
}

// Accumulator computes log(sum_i e^{x_i}) in one pass over the x_i, keeping
// the running maximum so that no term overflows: the streaming form of
// LogSumExp. The zero value is not ready; use NewAccumulator.
type Accumulator struct {
	max, sum float64
}

// NewAccumulator returns an empty accumulator (its Value is -Inf).
func NewAccumulator() Accumulator { return Accumulator{max: math.Inf(-1)} }

// Add adds the term e^x; x = -Inf (a zero term) is ignored.
func (s *Accumulator) Add(x float64) {
	switch {
	case math.IsInf(x, -1):
	case x <= s.max:
		s.sum += math.Exp(x - s.max)
	default:
		s.sum = s.sum*math.Exp(s.max-x) + 1
		s.max = x
	}
}

// Value returns log of the sum of the terms added (-Inf if none).
func (s *Accumulator) Value() float64 {
	if math.IsInf(s.max, -1) {
		return s.max
	}
	return s.max + math.Log(s.sum)
}

// smallestNormal is 2^-1022, the smallest positive normal float64.
const smallestNormal = 0x1p-1022

// Log is the natural logarithm, correct for subnormal arguments too: Go's
// math.Log on amd64 (assembly, go1.26.8) returns about -709 for every
// subnormal x (log(2.384e-309) comes out -708.99 instead of -710.63;
// log(5e-324) -709.09 instead of -744.44), which would let a bound built
// from logs of tiny probabilities drift in the unsafe direction. Log
// rescales subnormals by 2^64 first; other arguments go to math.Log.
func Log(x float64) float64 {
	if x > 0 && x < smallestNormal {
		return math.Log(x*0x1p64) - 64*math.Ln2
	}
	return math.Log(x)
}
