package server

import (
	"fmt"
	"math"
)

// average is the exponential moving average of the iterates, debiased as
// Adam debiases its moments (Kingma and Ba 2015, Sec. 3):
//
//	z_0 = 0,  z_t = beta z_{t-1} + (1 - beta) theta_t,
//	avg_t = z_t / (1 - beta^t)   (avg_0 = theta_0),
//
// that is, the mean of theta_1..theta_t weighted by beta^(t-i), normalised,
// with no pull towards the initial point. It is computed from the published
// parameters only, so it is post-processing: evaluating it costs no
// privacy.
type average struct {
	beta float64
	z    []float64
}

func validateEMA(beta float64) error {
	if !(beta >= 0 && beta < 1) {
		return fmt.Errorf("ema must be in [0, 1) (0 = off), got %g", beta)
	}
	return nil
}

// update adds theta_t.
func (a *average) update(theta []float64) {
	b := a.beta
	for i, x := range theta {
		a.z[i] = b*a.z[i] + (1-b)*x
	}
}

// value writes avg_t after t >= 1 steps into dst.
func (a *average) value(dst []float64, t int64) {
	c := 1 - math.Pow(a.beta, float64(t))
	for i, z := range a.z {
		dst[i] = z / c
	}
}
