package approxdp

import (
	"math"

	"github.com/shuffledp/shuffledp/internal/logmath"
)

// ClosedFormValid reports whether the FMT20 closed form applies to n shuffled
// eps0-LDP reports at target delta. Feldman, McMillan and Talwar (2020,
// Theorem 3.1; NeurIPS'21 supplement eq. (51)) state the condition
// eps0 <= log(n / (16 log(2/delta))); their reference implementation
// (apple/ml-shuffling-amplification) checks the stricter
// eps0 <= log(n / (16 log(4/delta))). We use the stricter one, so a closed
// form is never reported where either source would refuse it.
func ClosedFormValid(n int64, eps0, delta float64) bool {
	if n < 1 || delta <= 0 || delta >= 1 {
		return false
	}
	l := logmath.Log(4 / delta)
	return eps0 <= logmath.Log(float64(n)/(16*l))
}

// ClosedFormEpsilon returns the FMT20 closed-form bound on the epsilon of
// shuffling n reports of an eps0-LDP randomizer, at the given delta, and
// whether the theorem's validity condition (ClosedFormValid) holds. When it
// does not, the only valid statement is the trivial one: the shuffle is
// (eps0, 0)-DP, and ClosedFormEpsilon returns (eps0, false, nil).
//
// Theorem (FMT20, Thm 3.1, in the refined form of the authors' reference
// implementation): with a = 8 sqrt(e^eps0 log(4/delta) / n),
// b = 8 e^eps0 / n and e1 = log(1 + a + b),
//
//	eps = log(1 + (1 - e^-eps0) / (1 + e^(-eps0-e1)) * (a + b)).
//
// The paper's printed simplification uses the factor (e^eps0-1)/(e^eps0+1)
// in place of (1 - e^-eps0)/(1 + e^(-eps0-e1)); the latter is never smaller,
// so the value returned dominates both published expressions (at n=1e5,
// eps0=4, delta=1e-6 it is 0.5378040242, the value the reference README
// quotes). The result is capped at eps0, which is always valid.
func ClosedFormEpsilon(n int64, eps0, delta float64) (eps float64, valid bool, err error) {
	if err := checkN("n", n); err != nil {
		return 0, false, err
	}
	if err := checkEps0(eps0); err != nil {
		return 0, false, err
	}
	if err := checkOpenUnit("delta", delta); err != nil {
		return 0, false, err
	}
	if eps0 == 0 {
		return 0, true, nil
	}
	if !ClosedFormValid(n, eps0, delta) {
		return eps0, false, nil
	}
	nf := float64(n)
	a := 8 * math.Sqrt(math.Exp(eps0)*logmath.Log(4/delta)/nf)
	b := 8 * math.Exp(eps0) / nf
	e1 := math.Log1p(a + b)
	factor := -math.Expm1(-eps0) / (1 + math.Exp(-eps0-e1))
	eps = roundUp(math.Log1p(factor*(a+b)), 1e-14)
	if eps > eps0 {
		eps = eps0
	}
	return eps, true, nil
}
