package approxdp

import (
	"fmt"
	"math"

	"github.com/shuffledp/shuffledp/internal/logmath"
)

// KOV15Epsilon returns the epsilon of the T-fold adaptive composition of
// (eps, delta)-DP mechanisms given by Kairouz, Oh and Viswanath (ICML 2015,
// Theorem 3.5) for a slack deltaTilde in (0, 1]:
//
//	eps_T = min{ T eps,
//	             T eps (e^eps-1)/(e^eps+1) + eps sqrt(2T log(e + sqrt(T eps^2)/deltaTilde)),
//	             T eps (e^eps-1)/(e^eps+1) + eps sqrt(2T log(1/deltaTilde)) },
//
// with total delta 1 - (1-delta)^T (1-deltaTilde) (KOV15Delta). The factor
// (e^eps-1)/(e^eps+1) is evaluated as tanh(eps/2). T = 0 gives 0.
func KOV15Epsilon(eps float64, steps int64, deltaTilde float64) (float64, error) {
	if err := checkEps("eps", eps); err != nil {
		return 0, err
	}
	if steps < 0 {
		return 0, fmt.Errorf("steps must be >= 0, got %d", steps)
	}
	if math.IsNaN(deltaTilde) || deltaTilde <= 0 || deltaTilde > 1 {
		return 0, fmt.Errorf("delta-tilde must be in (0,1], got %g", deltaTilde)
	}
	if steps == 0 || eps == 0 {
		return 0, nil
	}
	t := float64(steps)
	head := t * eps * math.Tanh(eps/2)
	b1 := t * eps
	b2 := head + eps*math.Sqrt(2*t*logmath.Log(math.E+math.Sqrt(t)*eps/deltaTilde))
	b3 := head + eps*math.Sqrt(2*t*-logmath.Log(deltaTilde))
	e := roundUp(math.Min(b1, math.Min(b2, b3)), 1e-14)
	if math.IsInf(e, 0) || math.IsNaN(e) {
		return 0, fmt.Errorf("composed epsilon overflows float64 (eps=%g, steps=%d)", eps, steps)
	}
	return e, nil
}

// KOV15Delta returns the total delta 1 - (1-deltaStep)^T (1-deltaTilde) of
// KOV15 Theorem 3.5, computed as -expm1(T log1p(-deltaStep) + log1p(-deltaTilde))
// so that it stays accurate when every term is tiny, and rounded up.
func KOV15Delta(deltaStep float64, steps int64, deltaTilde float64) float64 {
	if steps == 0 {
		return 0
	}
	return roundUp(-math.Expm1(float64(steps)*math.Log1p(-deltaStep)+math.Log1p(-deltaTilde)), 1e-14)
}

// maxDeltaTilde returns the largest composition slack deltaTilde such that
// KOV15Delta(deltaStep, steps, deltaTilde) <= delta, or 0 when none exists.
// The returned split is checked with KOV15Delta itself, so it is feasible
// after rounding.
func maxDeltaTilde(delta, deltaStep float64, steps int64) float64 {
	lt := math.Log1p(-delta) - float64(steps)*math.Log1p(-deltaStep)
	if lt >= 0 {
		return 0
	}
	dt := -math.Expm1(lt)
	for i := 0; i < 60 && dt > 0; i++ {
		if KOV15Delta(deltaStep, steps, dt) <= delta {
			return dt
		}
		dt *= 1 - math.Ldexp(1, -40+i/2)
	}
	return 0
}

func errGamma(gamma float64) error {
	return fmt.Errorf("gamma (sampling ratio k/n) must be in (0,1], got %g", gamma)
}
