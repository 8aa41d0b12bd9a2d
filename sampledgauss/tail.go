package sampledgauss

import (
	"math"

	"github.com/shuffledp/shuffledp/internal/logmath"
)

// eulerN is the order of the Euler-transform bracket of a series
// remainder: eulerTail reads the eulerN+2 terms after the truncation point.
const eulerN = 8

// The remainder of the two series of Sec. 3.4 after index K >= floor(alpha).
//
// For k > alpha the reflection formula gives
//
//	C(alpha,k) = (-1)^{k+1} (sin(pi alpha)/pi) B(k-alpha, alpha+1)
//	           = (-1)^{k+1} (sin(pi alpha)/pi) int_0^1 t^{k-alpha-1} (1-t)^alpha dt,
//
// so on the left of z1, where u = qL/(1-q) lies in [0, 1],
//
//	|C(alpha,k)| u^k = (|sin(pi alpha)|/pi) int_0^1 (ut)^k t^{-alpha-1} (1-t)^alpha dt,
//
// and after integrating over z, the magnitudes a_k = |T1_k| (k > alpha) are
// the moments a_k = int s^k dnu(s) of one positive measure nu on [0, 1]
// (the image of t^{-alpha-1}(1-t)^alpha dt times the left part of mu0 under
// s = u t). The same holds on the right of z2 with 1/u in place of u. The
// signs alternate from k = floor(alpha)+1 on, so for K >= floor(alpha) the
// remainder is
//
//	R_K = sign(T_{K+1}) sum_{j>=0} (-1)^j a_{K+1+j} = sign(T_{K+1}) int s^{K+1}/(1+s) dnu(s)
//
// (monotone convergence: the partial sums of the geometric series are
// bounded by s^{K+1}). Two brackets follow.
//
//  1. 1/(1+s) lies in [1/2, 1] on [0, 1], so |R_K| lies in [a_{K+1}/2, a_{K+1}]
//     (the alternating-series bound, with its lower half).
//  2. 1/(1+s) = sum_{n>=0} (1-s)^n / 2^{n+1} with non-negative terms, so with
//     D_n = int s^{K+1} (1-s)^n dnu = sum_{j=0..n} C(n,j) (-1)^j a_{K+1+j} >= 0,
//     |R_K| = sum_n D_n / 2^{n+1}, and since (1-s)^n <= (1-s)^{N+1} for n > N,
//     sum_{n<=N} D_n/2^{n+1} <= |R_K| <= sum_{n<=N} D_n/2^{n+1} + D_{N+1}/2^{N+1}.
//
// The second (Euler's transformation, rigorous here because the a_k form a
// moment sequence) shrinks with K like a power K^{-N} instead of the
// first's K^{-alpha-2}, so the series stop after a few dozen terms past
// alpha instead of tens of thousands. Rounding in the D_n (alternating sums
// of N+2 terms, each with relative error rho) is bounded by 2^{N+1} (N+2)
// (2 rho + 4 eps) a_{K+1} and widens the bracket. The result is the
// intersection of both brackets.
//
// The split point zs is z0 only up to rounding, so on one side u (or 1/u)
// may exceed 1 by eta = expm1(|zs - z0|/sigma^2) ~ 1e-15: nu then lives on
// [0, 1 + eta]. The representation of R_K(u) as an integral of
// (ut)^{K+1}/(1+ut) holds for every u > -1 (both sides are analytic in u and
// agree on [0, 1)), so the first bracket becomes [a/(2+eta), a] and, since
// |1-s|^n <= eta^n on (1, 1+eta], the second widens by 3 eta^{N+1} a.

// tailBracket is R_K = sign * e^{logA} * theta with theta in [lo, hi].
type tailBracket struct {
	sign, logA, lo, hi, rho float64
}

// eulerTail returns the bracket of the remainder whose first terms are w
// (w[0] = T_{K+1}, ..., w[eulerN+1] = T_{K+eulerN+2}); eta bounds how far
// s may exceed 1 (see the note on the split point above).
func eulerTail(w []term, eta float64) tailBracket {
	a0 := w[0]
	if math.IsInf(a0.logAbs, -1) {
		return tailBracket{sign: 1, logA: math.Inf(-1)}
	}
	var b [eulerN + 2]float64
	rmax := 0.0
	for j := range b {
		b[j] = math.Exp(w[j].logAbs - a0.logAbs)
		rmax = math.Max(rmax, w[j].rho)
	}
	// Forward differences in place: after pass n, b[0] = (-1)^n Delta^n a / a0 = D_n.
	var d [eulerN + 2]float64
	d[0] = b[0]
	for n := 1; n < len(b); n++ {
		for j := 0; j < len(b)-n; j++ {
			b[j] -= b[j+1]
		}
		d[n] = b[0]
	}
	lower, scale := 0.0, 0.5
	for n := 0; n <= eulerN; n++ {
		lower += d[n] * scale
		scale /= 2
	}
	upper := lower + d[eulerN+1]*scale*2
	e := math.Ldexp(float64(eulerN+2)*(2*rmax+4*eps), eulerN+1) + 3*math.Pow(eta, eulerN+1)
	lo := math.Max(lower-e, 0.5*(1-a0.rho)/(1+eta))
	hi := math.Min(upper+e, 1+a0.rho)
	if !(lo <= hi) {
		lo, hi = 0.5*(1-a0.rho), 1+a0.rho
	}
	return tailBracket{sign: a0.sign, logA: a0.logAbs, lo: lo, hi: hi, rho: a0.rho}
}

// logWidth returns log(e^{logA} (hi - lo)), the uncertainty of R_K.
func (t tailBracket) logWidth() float64 {
	if math.IsInf(t.logA, -1) {
		return t.logA
	}
	return t.logA + logmath.Log(t.hi-t.lo)
}

// addTo adds the upper end of the bracket to the ledger: sign * a * hi
// when positive, -(a * lo) when negative; the relative error of a is rho.
func (t tailBracket) addTo(b *ledger) {
	if t.sign > 0 {
		b.add(1, t.logA+logmath.Log(t.hi), t.rho)
	} else {
		b.add(-1, t.logA+logmath.Log(t.lo), t.rho)
	}
}
