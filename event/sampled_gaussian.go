package event

import (
	"fmt"
	"math"
	"strconv"
)

// SampledGaussian is the central-DP baseline of DP-SGD, the sampled
// Gaussian mechanism: every client (record) is included independently with
// probability rate (Poisson sampling), the included clipped contributions
// are summed, and a trusted server adds one N(0, sigma^2 I) (sigma in units
// of the L2 sensitivity). There is no shuffler. Its RDP is exact
// (Mironov, Talwar, Zhang 2019; package sampledgauss) and rests on no
// assumption.
const SampledGaussian = "sampled-gaussian"

// validateSampledGaussian checks a sampled-gaussian event: rate in (0, 1]
// and sigma >= MinSigma are required; n is optional (0, or the population
// size, for the record: the RDP does not depend on it); k and eps0 are not
// used.
func (e Event) validateSampledGaussian() error {
	if e.N < 0 {
		return fmt.Errorf("--n must be >= 1 (the population size) or omitted for --mechanism %s, got %d", SampledGaussian, e.N)
	}
	if e.K != 0 {
		return fmt.Errorf("--k is not used by --mechanism %s (Poisson sampling: the batch size is random; give --rate, or --k with --n for rate k/n)", SampledGaussian)
	}
	if e.Eps0 != 0 {
		return fmt.Errorf("--eps0 is not used by --mechanism %s (Gaussian noise: use --sigma)", SampledGaussian)
	}
	if e.Rate == 0 {
		return fmt.Errorf("--rate (Poisson sampling probability) is required for --mechanism %s", SampledGaussian)
	}
	if !(e.Rate > 0 && e.Rate <= 1) {
		return fmt.Errorf("--rate must be in (0, 1], got %g", e.Rate)
	}
	if e.Sigma == 0 {
		return fmt.Errorf("--sigma (noise multiplier) is required for --mechanism %s", SampledGaussian)
	}
	if !(e.Sigma > 0) || math.IsInf(e.Sigma, 0) {
		return fmt.Errorf("--sigma must be positive and finite, got %g", e.Sigma)
	}
	if e.Sigma < MinSigma {
		return fmt.Errorf("--sigma must be >= %g (below, lambda/(2 sigma^2) leaves float64), got %g", MinSigma, e.Sigma)
	}
	return nil
}

// sampledGaussianString formats a sampled-gaussian event, with n only when
// it is set: "sampled-gaussian(rate=0.001, sigma=1.1)".
func (e Event) sampledGaussianString() string {
	g := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	s := SampledGaussian + "("
	if e.N != 0 {
		s += "n=" + strconv.FormatInt(e.N, 10) + ", "
	}
	s += "rate=" + g(e.Rate) + ", sigma=" + g(e.Sigma)
	if e.Adjacency != "" {
		s += ", adjacency=" + e.Adjacency
	}
	return s + ")"
}
