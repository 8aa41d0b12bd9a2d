package randomizer

import (
	"math"
	"math/big"
	"math/bits"
)

// two64 is 2^64 as a float64 (exact).
const two64 = 18446744073709551616.0

// expLowerBound returns a big.Float E with E ≤ e^x and E ≥ e^x·(1 − 2^-200),
// for |x| ≤ 64. It evaluates e^(x/2^s) by its Taylor series at 320 bits and
// squares s times; the accumulated relative rounding error is below 2^-280,
// and the result is then lowered by a relative 2^-200 to make it a
// guaranteed lower bound.
func expLowerBound(x float64) *big.Float {
	const prec = 320
	s := 12
	y := new(big.Float).SetPrec(prec).SetFloat64(x)
	y.SetMantExp(y, -s) // y = x / 2^s, |y| ≤ 2^-6
	// Taylor series: sum_{n=0..60} y^n/n!; truncation error < |y|^61/61! ≪ 2^-400.
	sum := new(big.Float).SetPrec(prec).SetInt64(1)
	term := new(big.Float).SetPrec(prec).SetInt64(1)
	for n := 1; n <= 60; n++ {
		term.Mul(term, y)
		term.Quo(term, new(big.Float).SetPrec(prec).SetInt64(int64(n)))
		sum.Add(sum, term)
	}
	for i := 0; i < s; i++ {
		sum.Mul(sum, sum)
	}
	margin := new(big.Float).SetPrec(prec).SetMantExp(sum, -200)
	return sum.Sub(sum, margin)
}

// Threshold returns the largest integer t < 2^64 with
//
//	t · m ≤ e^eps0 · (2^64 − t),
//
// i.e. t = floor(2^64 · e^eps0/(e^eps0 + m)), computed with a guaranteed
// lower bound on e^eps0 so that it never rounds up.
//
// It is the "keep" threshold of randomized response over m+1 outcomes
// (m = 1: binary RR; m = k−1: k-RR; and the upper coin threshold of R_inf,
// R_1 and Quan with m = 1). A coin that lands heads when a uniform 64-bit
// word is < t realises P[keep] = t/2^64 and P[each other outcome] =
// (1 − t/2^64)/m, whose ratio t·m/(2^64 − t) is at most e^eps0: the
// realised probabilities, not only the ideal ones, satisfy eps0-LDP.
// The realised P[keep] is below the ideal e^eps0/(e^eps0+m) by less than
// 2^-64 (plus 2^-200 relative for the lower bound on e^eps0).
func Threshold(eps0 float64, m int) uint64 {
	const prec = 320
	e := expLowerBound(eps0)
	den := new(big.Float).SetPrec(prec).Add(e, new(big.Float).SetPrec(prec).SetInt64(int64(m)))
	q := new(big.Float).SetPrec(prec).Quo(e, den)
	q.SetMantExp(q, 64)
	// q ≤ 2^64 e/(e+m) up to a relative 2^-318 rounding; flooring a value
	// that may exceed the true one by that much could only round up if the
	// true value were within 2^-250 of an integer from below — we subtract
	// 2^-100 before flooring to exclude that.
	q.Sub(q, new(big.Float).SetPrec(prec).SetMantExp(big.NewFloat(1), -100))
	t, _ := q.Uint64() // truncates toward zero
	return t
}

// signCoin holds the thresholds of a ±1 coin whose heads probability is an
// affine function of u ∈ [−1, 1]:
//
//	P[+1 | u] = 1/2 + (u/2)·(e^eps0 − 1)/(e^eps0 + 1)
//
// (the coin of R_inf, R_1 and Quan). It is realised as t(u)/2^64 with
// t(u) = lo + round((u+1)/2 · (hi − lo)), hi = Threshold(eps0, 1),
// lo = 2^64 − hi. Because lo ≤ t(u) ≤ hi for every u, the ratio of the
// realised probabilities of either sign under any two inputs is at most
// hi/lo ≤ e^eps0 (Threshold's guarantee), exactly.
type signCoin struct {
	lo, hi uint64
}

func newSignCoin(eps0 float64) signCoin {
	hi := Threshold(eps0, 1)
	return signCoin{lo: -hi, hi: hi} // -hi = 2^64 − hi in uint64
}

// threshold returns t(u) for u ∈ [−1, 1] (clamped).
func (c signCoin) threshold(u float64) uint64 {
	if !(u > -1) { // also catches NaN; callers reject NaN earlier
		return c.lo
	}
	if u >= 1 {
		return c.hi
	}
	// frac = (u+1)/2 in [0,1], as a 0.64 fixed-point number; the product
	// with the span is exact in 128 bits.
	frac := (u + 1) / 2
	f := uint64(frac * two64) // frac < 1 so frac·2^64 < 2^64
	if frac*two64 >= two64 {
		f = math.MaxUint64
	}
	hi, lo := bits.Mul64(f, c.hi-c.lo)
	// round to nearest
	if lo>>63 == 1 {
		hi++
	}
	return c.lo + hi
}

// prob returns the realised probability t/2^64 of threshold t as a float64
// (rounded to nearest).
func prob(t uint64) float64 {
	return float64(t) / two64
}

// probComplement returns 1 − t/2^64 computed without cancellation.
func probComplement(t uint64) float64 {
	return float64(-t) / two64
}

// bias returns 2·t_hi/2^64 − 1, the realised counterpart of
// (e^eps0−1)/(e^eps0+1) = 1/c: E[sign | u=1] under the realised coin.
// Since E[sign | u] = 2t(u)/2^64 − 1 = u·(hi−lo)/2^64 up to the rounding of
// t(u), dividing a decoded sign by bias() gives an unbiased estimate of u.
func (c signCoin) bias() float64 {
	return float64(c.hi-c.lo) / two64
}
