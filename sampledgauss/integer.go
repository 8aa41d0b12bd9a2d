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
	b := newLedger()
	fm := float64(m)
	for k := 2; k <= m; k++ {
		fk := float64(k)
		lc := logmath.LogBinom(fm, fk)
		x := fk * (fk - 1) * p.inv2s2
		le := logExpm1(x)
		l := lc + (fm-fk)*p.l1 + fk*p.lq + le
		mag := binomMag(lc, fm, fk) + math.Abs((fm-fk)*p.l1) + math.Abs(fk*p.lq) + math.Abs(le) + x
		b.add(1, l, rho(mag))
	}
	return b.upper()
}

// logExpm1 returns log(e^x - 1) for x > 0 without overflow or
// cancellation.
func logExpm1(x float64) float64 {
	if x > 36 {
		return x + math.Log1p(-math.Exp(-x))
	}
	return math.Log(math.Expm1(x))
}

// binomMag bounds the size of the intermediate quantities of
// logmath.LogBinom(n, k) = -log(n+1) - LogBeta(k+1, n-k+1) (Stirling
// corrections, k log terms), for the error bound.
func binomMag(lc, n, k float64) float64 {
	return math.Abs(lc) + math.Min(k, n-k) + 2*math.Log1p(n) + 1
}
