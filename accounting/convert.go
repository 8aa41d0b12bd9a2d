package accounting

import (
	"fmt"
	"math"

	"github.com/shuffledp/shuffledp/internal/logmath"
)

// Conversion names.
const (
	ConversionCKS20   = "cks20"
	ConversionMironov = "mironov"
)

// conservative nudges a non-negative value up by a few ulps so that
// rounding in the last operations can only make a reported epsilon larger.
func conservative(x float64) float64 {
	if x <= 0 {
		return 0
	}
	return x * (1 + 8*0x1p-52)
}

// EpsilonFromRDP converts an RDP guarantee (order, rdp) — rdp being the
// total over all composed rounds — to (epsilon, delta)-DP, returning the
// smaller of two valid conversions and its name:
//
//   - Canonne, Kamath, Steinke 2020 (Prop. 12; Balle et al. 2020 Thm 21;
//     NeurIPS'21 Lemma 1): eps = rdp + (log(1/delta) + (order-1) log(1-1/order) - log(order)) / (order-1);
//   - Mironov 2017 (Prop. 3): eps = rdp + log(1/delta)/(order-1).
//
// The result is clamped at 0 (an (eps, delta) guarantee implies every
// larger eps) and nudged up a few ulps.
func EpsilonFromRDP(order, rdp, delta float64) (float64, string, error) {
	if err := checkOrder(order, false); err != nil {
		return 0, "", err
	}
	if !(delta > 0 && delta < 1) {
		return 0, "", fmt.Errorf("delta must be in (0,1), got %g", delta)
	}
	if math.IsNaN(rdp) || rdp < 0 {
		return 0, "", fmt.Errorf("rdp must be a non-negative number, got %g", rdp)
	}
	a := order
	logInvDelta := -logmath.Log(delta)
	mir := rdp + logInvDelta/(a-1)
	cks := rdp + (logInvDelta+(a-1)*math.Log1p(-1/a)-logmath.Log(a))/(a-1)
	if cks <= mir {
		return conservative(cks), ConversionCKS20, nil
	}
	return conservative(mir), ConversionMironov, nil
}

// DeltaFromRDP is the inverse of EpsilonFromRDP: the smallest delta, over
// the two conversions, for which (order, rdp)-RDP implies (epsilon, delta)-DP.
// The result is in [0, 1].
func DeltaFromRDP(order, rdp, epsilon float64) (float64, string, error) {
	if err := checkOrder(order, false); err != nil {
		return 0, "", err
	}
	if math.IsNaN(epsilon) || math.IsInf(epsilon, 0) || epsilon < 0 {
		return 0, "", fmt.Errorf("epsilon must be a finite number >= 0, got %g", epsilon)
	}
	if math.IsNaN(rdp) || rdp < 0 {
		return 0, "", fmt.Errorf("rdp must be a non-negative number, got %g", rdp)
	}
	a := order
	logMir := (a - 1) * (rdp - epsilon)
	logCKS := (a-1)*(rdp-epsilon) + (a-1)*math.Log1p(-1/a) - logmath.Log(a)
	name, logD := ConversionMironov, logMir
	if logCKS < logMir {
		name, logD = ConversionCKS20, logCKS
	}
	d := math.Exp(logD) * (1 + 8*0x1p-52)
	if d > 1 || math.IsNaN(d) {
		d = 1
	}
	return d, name, nil
}
