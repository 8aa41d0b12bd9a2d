package sampledgauss

import (
	"math"

	"github.com/shuffledp/shuffledp/internal/logmath"
)

// integerLogAm1 returns an upper bound on log(A_m - 1) at an integer order
// m >= 2 for 0 < q < 1, from Mironov, Talwar, Zhang 2019, Sec. 3.3:
//
//	A_m = sum_{k=0..m} C(m,k) (1-q)^{m-k} q^k e^{(k^2-k)/(2 sigma^2)}.
//
// The binomial weights sum to 1, and the k = 0, 1 exponents vanish, so
//
//	A_m - 1 = sum_{k=2..m} C(m,k) (1-q)^{m-k} q^k (e^{(k^2-k)/(2 sigma^2)} - 1),
//
// a sum of positive terms that keeps its relative accuracy when A_m is
// within 1e-16 of 1 (small q, large sigma), where log(A_m) computed from
// A_m itself would not.
func (p params) integerLogAm1(m int) float64 {
	// All terms are positive: no cancellation, so each term's relative
	// error bound carries over to the sum. Two passes: the logs, then the
	// sum scaled by the largest.
	ls := make([]float64, 0, m-1)
	rs := make([]float64, 0, m-1)
	fm := float64(m)
	top := math.Inf(-1)
	for k := 2; k <= m; k++ {
		fk := float64(k)
		lc := logmath.LogBinom(fm, fk)
		x := fk * (fk - 1) * p.inv2s2
		le := logExpm1(x)
		l := lc + (fm-fk)*p.l1 + fk*p.lq + le
		mag := binomMag(lc, fm, fk) + math.Abs((fm-fk)*p.l1) + math.Abs(fk*p.lq) + math.Abs(le) + x
		ls = append(ls, l)
		rs = append(rs, rho(mag))
		top = math.Max(top, l)
	}
	return positiveSumUpper(ls, rs, top)
}

// positiveSumUpper returns the log of an upper bound on sum_i e^{ls[i]},
// each term with relative error at most rs[i] and top = max ls. Scaling
// by e^{top} adds eps(|ls[i]-top|+1) to each term's relative error; the
// positive sum's own rounding is below n eps relative, the final log a few
// ulps.
func positiveSumUpper(ls, rs []float64, top float64) float64 {
	if math.IsInf(top, 0) || math.IsNaN(top) {
		return top
	}
	var s, r float64
	for i, l := range ls {
		d := l - top
		x := math.Exp(d)
		s += x
		r += x * (rs[i] + eps*(math.Abs(d)+1))
	}
	n := float64(len(ls))
	bound := (s + r + (n+1)*math.Exp(-740)) * (1 + 4*eps*(n+4))
	v := top + logmath.Log(bound)
	return v + 8*eps*(math.Abs(v)+1)
}

// logExpm1 returns log(e^x - 1) for x > 0 without overflow or
// cancellation.
func logExpm1(x float64) float64 {
	if x > 36 {
		return x + math.Log1p(-math.Exp(-x))
	}
	return logmath.Log(math.Expm1(x))
}

// binomMag bounds the size of the intermediate quantities of
// logmath.LogBinom(n, k) = -log(n+1) - LogBeta(k+1, n-k+1) (Stirling
// corrections, k log terms), for the error bound.
func binomMag(lc, n, k float64) float64 {
	return math.Abs(lc) + math.Min(k, n-k) + 2*math.Log1p(n) + 1
}
