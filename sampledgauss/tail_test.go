package sampledgauss

import (
	"math"
	"testing"
)

// window returns the eulerN+2 terms sign*(-1)^j a(K+1+j).
func window(sign float64, K int, a func(k int) float64) []term {
	w := make([]term, eulerN+2)
	for j := range w {
		s := sign
		if j%2 == 1 {
			s = -sign
		}
		w[j] = term{sign: s, logAbs: math.Log(a(K + 1 + j)), rho: 4 * eps}
	}
	return w
}

// TestEulerTailBrackets checks the remainder bracket on alternating
// moment sequences with known sums: a_k = x^k (nu a point mass at x <= 1,
// remainder x^{K+1}/(1+x)) and a_k = 1/(k+1) (nu uniform on [0,1],
// remainder sum_{j>=0} (-1)^j/(K+2+j) = (-1)^{K+1} (log 2 - sum_{i=1..K+1} (-1)^{i+1}/i)).
func TestEulerTailBrackets(t *testing.T) {
	type tc struct {
		name  string
		K     int
		a     func(k int) float64
		exact float64
		width float64 // the bracket must be at least this narrow (relative to a_{K+1})
	}
	var cases []tc
	for _, x := range []float64{0.1, 0.5, 0.9, 1} {
		for _, K := range []int{2, 10, 50} {
			x, K := x, K
			cases = append(cases, tc{"point mass", K, func(k int) float64 { return math.Pow(x, float64(k)) },
				math.Pow(x, float64(K+1)) / (1 + x), 0.5})
		}
	}
	for _, K := range []int{3, 10, 30, 100} {
		s := 0.0
		for i := 1; i <= K+1; i++ {
			s += math.Pow(-1, float64(i+1)) / float64(i)
		}
		exact := math.Abs(math.Ln2 - s)
		// Euler's transform converges like K^{-N} here.
		cases = append(cases, tc{"uniform", K, func(k int) float64 { return 1 / float64(k+1) }, exact, 1e-3})
	}
	for _, c := range cases {
		for _, sign := range []float64{1, -1} {
			r := eulerTail(window(sign, c.K, c.a), 0)
			a0 := c.a(c.K + 1)
			lo, hi := sign*a0*r.lo, sign*a0*r.hi
			if sign < 0 {
				lo, hi = hi, lo
			}
			exact := sign * c.exact
			tol := 1e-13 * c.exact
			if !(lo <= exact+tol && exact <= hi+tol) {
				t.Errorf("%s K=%d sign=%g: remainder %.17g outside [%.17g, %.17g]", c.name, c.K, sign, exact, lo, hi)
			}
			if r.hi-r.lo > c.width {
				t.Errorf("%s K=%d: bracket width %.3g a_{K+1}, want <= %g", c.name, c.K, r.hi-r.lo, c.width)
			}
			if r.sign != sign {
				t.Errorf("%s K=%d: sign %g, want %g", c.name, c.K, r.sign, sign)
			}
		}
	}
}

// TestEulerTailZero: a remainder of zero terms (integer orders) is zero.
func TestEulerTailZero(t *testing.T) {
	w := make([]term, eulerN+2)
	for i := range w {
		w[i] = zeroTerm
	}
	r := eulerTail(w, 0)
	if !math.IsInf(r.logWidth(), -1) {
		t.Errorf("zero remainder has width e^%g", r.logWidth())
	}
}
