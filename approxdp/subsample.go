package approxdp

import (
	"math"

	"github.com/shuffledp/shuffledp/internal/logmath"
)

// UllmanSubsample returns the (eps, delta) guarantee of running an
// (eps, delta)-DP mechanism on a uniformly random subset of gamma·n of n
// records, drawn without replacement (Ullman 2017, CS7880 lecture notes /
// HW1 solution; Balle, Barthe and Gaboardi 2018, Thm 9, for replace-one
// neighbours):
//
//	eps' = log(1 + gamma (e^eps - 1)),  delta' = gamma·delta.
//
// It is computed as log1p(gamma·expm1(eps)), accurate for tiny gamma or eps,
// and rounded up.
func UllmanSubsample(eps, delta, gamma float64) (epsOut, deltaOut float64, err error) {
	if err := checkEps("eps", eps); err != nil {
		return 0, 0, err
	}
	if err := checkUnit("delta", delta); err != nil {
		return 0, 0, err
	}
	if math.IsNaN(gamma) || gamma <= 0 || gamma > 1 {
		return 0, 0, errGamma(gamma)
	}
	if gamma == 1 {
		return eps, delta, nil
	}
	epsOut = math.Log1p(gamma * math.Expm1(eps))
	if math.IsInf(epsOut, 1) {
		// e^eps overflowed: log(1 + gamma(e^eps-1)) = eps + log(gamma) + log1p((1-gamma)e^-eps/gamma)
		epsOut = eps + logmath.Log(gamma) + math.Log1p((1-gamma)*math.Exp(-eps)/gamma)
	}
	epsOut = roundUp(epsOut, 1e-15)
	if epsOut > eps {
		epsOut = eps
	}
	return epsOut, roundUp(gamma*delta, 1e-15), nil
}
