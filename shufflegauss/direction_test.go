package shufflegauss

import (
	"math"
	"testing"
)

// renyiByQuadrature integrates, for n = 2 clients, P = M(D) = N(0, sigma^2 I_2)
// and Q = M(D') = (N(e_1, sigma^2 I) + N(e_2, sigma^2 I))/2 (the pair of the
// paper's proof), the log-moments log E_P[L^a] with L = dQ/dP at a = lambda
// (Theorem 1's direction, D_lambda(Q||P)) and a = 1-lambda (the reverse,
// D_lambda(P||Q)), by the trapezoidal rule on a wide grid (the integrand is
// smooth and decays like a Gaussian, so the rule converges geometrically).
func renyiByQuadrature(sigma float64, lambda float64) (forward, reverse float64) {
	s2 := sigma * sigma
	lo, hi := -14*sigma-lambda, 14*sigma+lambda
	const steps = 500
	h := (hi - lo) / steps
	var f, r float64
	for i := 0; i <= steps; i++ {
		x := lo + float64(i)*h
		wx := 1.0
		if i == 0 || i == steps {
			wx = 0.5
		}
		for j := 0; j <= steps; j++ {
			y := lo + float64(j)*h
			w := wx
			if j == 0 || j == steps {
				w *= 0.5
			}
			dens := math.Exp(-(x*x+y*y)/(2*s2)) / (2 * math.Pi * s2)
			l := (math.Exp((2*x-1)/(2*s2)) + math.Exp((2*y-1)/(2*s2))) / 2
			f += w * dens * math.Pow(l, lambda)
			r += w * dens * math.Pow(l, 1-lambda)
		}
	}
	return math.Log(f * h * h), math.Log(r * h * h)
}

// TestDirectionAtTwoClients checks Theorem 1 against direct numerical
// integration of its own definition at n = 2 (an oracle independent of
// the combinatorics), and records how the reverse direction compares: for
// these settings D_lambda(P||Q) <= D_lambda(Q||P), i.e. Theorem 1's
// direction is the larger one, consistent with (but not a proof of) the
// paper's worst-case claim.
func TestDirectionAtTwoClients(t *testing.T) {
	if testing.Short() {
		t.Skip("2-D quadrature")
	}
	for _, c := range []struct{ sigma, lambda float64 }{{1, 2}, {1, 5}, {2, 3}, {0.7, 4}, {3, 8}} {
		s, _ := NewShuffle(c.sigma, 2)
		thm1, _ := s.LogMoment(int(c.lambda))
		fwd, rev := renyiByQuadrature(c.sigma, c.lambda)
		if math.Abs(fwd-thm1) > 1e-8*(1+thm1) {
			t.Errorf("sigma=%g order=%g: quadrature %.12g, Theorem 1 %.12g", c.sigma, c.lambda, fwd, thm1)
		}
		if rev > fwd {
			t.Errorf("sigma=%g order=%g: reverse direction %.6g exceeds Theorem 1's %.6g", c.sigma, c.lambda, rev/(c.lambda-1), fwd/(c.lambda-1))
		}
		t.Logf("sigma=%g order=%g: eps forward (Thm 1) %.6g, reverse %.6g", c.sigma, c.lambda, fwd/(c.lambda-1), rev/(c.lambda-1))
	}
}
