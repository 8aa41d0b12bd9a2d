package approxdp

import (
	"fmt"
	"math"
)

// GaussianDelta returns delta0 such that the Gaussian mechanism with noise
// multiplier sigma (noise standard deviation sigma times the L2
// sensitivity) is (eps0, delta0)-DP, by the exact characterisation of Balle
// and Wang (ICML 2018, Thm 8, the analytic Gaussian mechanism):
//
//	delta0 = Phi(1/(2 sigma) - eps0 sigma) - e^eps0 Phi(-1/(2 sigma) - eps0 sigma),
//
// rounded up by 1e-12 of its first term (the scale of the cancellation).
func GaussianDelta(sigma, eps0 float64) (float64, error) {
	if !(sigma > 0) || math.IsInf(sigma, 0) {
		return 0, fmt.Errorf("sigma must be positive and finite, got %g", sigma)
	}
	if err := checkEps("eps0", eps0); err != nil {
		return 0, err
	}
	phi := func(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }
	a := phi(1/(2*sigma) - eps0*sigma)
	b := phi(-1/(2*sigma) - eps0*sigma)
	var d float64
	if b > 0 {
		d = a - math.Exp(eps0)*b
	} else {
		d = a
	}
	d = math.Max(d, 0) + 1e-12*a
	return math.Min(d, 1), nil
}

// GaussianEps0 returns an eps0 >= 0 at which the Gaussian mechanism with
// noise multiplier sigma is (eps0, delta0)-DP (GaussianDelta(sigma, eps0)
// <= delta0), within 1e-9 relative of the smallest, by bisection.
func GaussianEps0(sigma, delta0 float64) (float64, error) {
	if err := checkOpenUnit("delta0", delta0); err != nil {
		return 0, err
	}
	lo, hi := 0.0, 1.0
	for {
		d, err := GaussianDelta(sigma, hi)
		if err != nil {
			return 0, err
		}
		if d <= delta0 {
			break
		}
		if lo, hi = hi, 2*hi; hi > 1e6 {
			return 0, fmt.Errorf("delta0 %g: no eps0 below 1e6 for sigma %g", delta0, sigma)
		}
	}
	if d, _ := GaussianDelta(sigma, 0); d <= delta0 {
		return 0, nil
	}
	for hi-lo > 1e-9*hi {
		mid := (lo + hi) / 2
		if d, _ := GaussianDelta(sigma, mid); d <= delta0 {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, nil
}

// CheckInGaussianComposition is the (eps, delta) guarantee of T rounds of
// shuffled check-in with Gaussian clients under the approximate-DP route,
// with the split that produced it.
type CheckInGaussianComposition struct {
	Epsilon float64 // total epsilon after Steps rounds
	Delta   float64 // total delta used, <= the target
	Steps   int64

	Eps0, Delta0   float64 // every client's report is (Eps0, Delta0)-LDP (GaussianDelta)
	Reports        int64   // the shuffle is analysed with this many reports (the differing client's and at least Reports-1 others)
	TailDelta      float64 // P(fewer than Reports-1 others check in) (Chernoff), added to the shuffle's delta
	ShuffleEpsilon float64 // one shuffle: (ShuffleEpsilon, ShuffleDelta)-DP, the delta0 and tail terms included
	ShuffleDelta   float64
	StepEpsilon    float64 // after amplification by the check-in rate gamma
	StepDelta      float64
	DeltaTilde     float64 // KOV15 composition slack
}

// CheckInGaussianKOV15 returns the approximate-DP route for T = steps
// rounds of shuffled check-in Gaussian (each of n clients checks in with
// probability gamma and sends its clipped value plus N(0, sigma^2) noise in
// units of the sensitivity, the reports are shuffled): the "baseline" of
// Liew et al. 2022 that the ICLR'23 submission's Fig. 1b compares with,
// assembled from the steps package approxdp provides:
//
//  1. each report is (eps0, delta0)-LDP, the analytic Gaussian mechanism
//     (GaussianDelta) at noise multiplier sigma. sigma is the noise in
//     units of the sensitivity the caller assumes: the clip radius C
//     (zero-out adjacency, one vector replaced by zero: ICLR'23 Thm 1's
//     pair; like for like with the shuffle Gaussian RDP bounds under
//     event.AdjacencyZeroOut), or the LDP diameter 2C (replace-one
//     adjacency, any two inputs of the ball; pass sigma/2: like for like
//     with them under event.AdjacencyReplaceOne, the default of shuffledp
//     train and account), which is how the ICLR'23 submission's Sec. 5.1
//     calls sigma 9.48 (1, 1/n)-LDP;
//  2. amplification by shuffling, FMT20 for (eps0, delta0)-LDP randomizers
//     (their Thm 3.8 as the ICLR'23 submission, Sec. 5.1, states it): m
//     shuffled reports are (eps, deltaS + (e^eps + 1)(1 + e^-eps0/2) m delta0)
//     -DP, eps the clones bound of m eps0-LDP reports at deltaS (we take the
//     better of the numerical and closed forms, and m <= n in the delta0
//     term); the number of reports is random: with probability at least
//     1 - beta at least mLow = floor(mu - sqrt(2 mu log(1/beta))) of the
//     other n-1 clients check in (mu = (n-1) gamma; Chernoff), and the
//     shuffle is analysed with mLow + 1 reports, beta added to its delta;
//  3. amplification by subsampling at rate gamma (the differing client
//     takes part with probability gamma): eps' = log(1 + gamma(e^eps - 1)),
//     delta' = gamma delta (UllmanSubsample, as the NeurIPS'21 baseline);
//  4. KOV15 strong composition over the T rounds with slack deltaTilde.
//
// The split of delta (delta0, deltaS = beta, deltaTilde) is searched on
// log grids (2 points per decade: delta0 in [1e-20, 1e-4], deltaS in
// [1e-20, delta/(T gamma)]); the result is the bound at the best feasible
// split found, so it is a valid upper bound whatever the search misses.
func CheckInGaussianKOV15(n int64, gamma, sigma float64, steps int64, delta float64) (CheckInGaussianComposition, error) {
	if err := checkN("n", n); err != nil {
		return CheckInGaussianComposition{}, err
	}
	if math.IsNaN(gamma) || gamma <= 0 || gamma > 1 {
		return CheckInGaussianComposition{}, errGamma(gamma)
	}
	if !(sigma > 0) || math.IsInf(sigma, 0) {
		return CheckInGaussianComposition{}, fmt.Errorf("sigma must be positive and finite, got %g", sigma)
	}
	if steps < 0 {
		return CheckInGaussianComposition{}, fmt.Errorf("steps must be >= 0, got %d", steps)
	}
	if err := checkOpenUnit("delta", delta); err != nil {
		return CheckInGaussianComposition{}, err
	}
	if steps == 0 {
		return CheckInGaussianComposition{}, nil
	}
	best := CheckInGaussianComposition{Epsilon: math.Inf(1)}
	mu := float64(n-1) * gamma
	const perDecade = 2
	dsMax := delta / (gamma * float64(steps))
	for i := 2 * perDecade * 2; i <= 20*perDecade; i++ { // delta0 = 10^-2 .. 10^-20
		delta0 := math.Pow(10, -float64(i)/perDecade)
		eps0, err := GaussianEps0(sigma, delta0)
		if err != nil || eps0 == 0 {
			continue
		}
		jMin := int(math.Ceil(-perDecade * math.Log10(dsMax)))
		for j := max(jMin, 0); j <= 20*perDecade; j++ {
			ds := math.Pow(10, -float64(j)/perDecade)
			c, ok, err := checkInAtSplit(n, mu, gamma, eps0, delta0, ds, steps, delta)
			if err != nil {
				return CheckInGaussianComposition{}, err
			}
			if ok && c.Epsilon < best.Epsilon {
				best = c
			}
		}
	}
	if math.IsInf(best.Epsilon, 0) {
		return CheckInGaussianComposition{}, fmt.Errorf("approxdp: no feasible delta split for check-in Gaussian (n=%d, gamma=%g, sigma=%g, steps=%d, delta=%g)", n, gamma, sigma, steps, delta)
	}
	return best, nil
}

// checkInAtSplit evaluates CheckInGaussianKOV15's pipeline at one split:
// (eps0, delta0) per report, deltaS = beta for the shuffle.
func checkInAtSplit(n int64, mu, gamma, eps0, delta0, ds float64, steps int64, delta float64) (CheckInGaussianComposition, bool, error) {
	beta := ds
	mLow := int64(math.Floor(mu - math.Sqrt(2*mu*math.Log(1/beta))))
	c := CheckInGaussianComposition{Steps: steps, Eps0: eps0, Delta0: delta0}
	epsS := eps0
	if mLow >= 1 {
		curve, err := NewShuffleCurve(mLow+1, math.Min(eps0, maxEps0), ShuffleBest)
		if err != nil {
			return c, false, err
		}
		e, err := curve.Epsilon(ds)
		if err != nil {
			return c, false, err
		}
		epsS = math.Min(eps0, e)
		c.Reports, c.TailDelta = mLow+1, beta
	} else {
		c.Reports, c.TailDelta, ds = 1, 0, 0 // one report: (eps0, delta0) itself
	}
	dShuffle := ds + c.TailDelta + (math.Exp(epsS)+1)*(1+math.Exp(-eps0)/2)*float64(n)*delta0
	if !(dShuffle < 1) {
		return c, false, nil
	}
	dt := maxDeltaTilde(delta, gamma*dShuffle, steps)
	if dt <= 0 {
		return c, false, nil
	}
	comp, err := ComposeAtSplit(epsS, dShuffle, gamma, steps, dt)
	if err != nil {
		return c, false, err
	}
	if comp.Delta > delta {
		return c, false, nil
	}
	c.Epsilon, c.Delta = comp.Epsilon, comp.Delta
	c.ShuffleEpsilon, c.ShuffleDelta = epsS, dShuffle
	c.StepEpsilon, c.StepDelta, c.DeltaTilde = comp.StepEpsilon, comp.StepDelta, comp.DeltaTilde
	return c, true, nil
}
