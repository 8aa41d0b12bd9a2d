package approxdp

import (
	"fmt"
	"math"
	"sync"

	"github.com/shuffledp/shuffledp/internal/logmath"
)

// ShuffleMethod selects the bound used for one shuffle.
type ShuffleMethod int

const (
	// ShuffleClosedForm is FMT20 Theorem 3.1 (ClosedFormEpsilon); eps0 where
	// its validity condition fails.
	ShuffleClosedForm ShuffleMethod = iota
	// ShuffleNumerical is the upper end of the numerical clones bound
	// (NumericalEpsilon).
	ShuffleNumerical
	// ShuffleBest is the smaller of the two, both being valid.
	ShuffleBest
)

// String names the method as the CLI and the figures do.
func (m ShuffleMethod) String() string {
	switch m {
	case ShuffleClosedForm:
		return "fmt20-analytic"
	case ShuffleNumerical:
		return "fmt20-numeric"
	case ShuffleBest:
		return "fmt20-best"
	}
	return fmt.Sprintf("ShuffleMethod(%d)", int(m))
}

// ShuffleCurve is eps(delta) for one shuffle of n reports of an eps0-LDP
// randomizer under a chosen bound, with evaluations cached (the delta-split
// optimisation and figure sweeps query the same deltas again and again).
// It is safe for concurrent use.
type ShuffleCurve struct {
	n      int64
	eps0   float64
	method ShuffleMethod

	mu      sync.Mutex
	cache   map[float64]float64 // delta -> reported epsilon
	numeric map[float64]float64 // delta -> numerical clones Upper
}

// NewShuffleCurve validates its arguments and returns an empty curve.
func NewShuffleCurve(n int64, eps0 float64, method ShuffleMethod) (*ShuffleCurve, error) {
	if err := checkN("n", n); err != nil {
		return nil, err
	}
	if err := checkEps0(eps0); err != nil {
		return nil, err
	}
	if method < ShuffleClosedForm || method > ShuffleBest {
		return nil, fmt.Errorf("shuffle method must be closed-form, numerical or best, got %d", int(method))
	}
	return &ShuffleCurve{n: n, eps0: eps0, method: method, cache: map[float64]float64{}, numeric: map[float64]float64{}}, nil
}

// Eps0 returns the local randomizer's epsilon.
func (s *ShuffleCurve) Eps0() float64 { return s.eps0 }

// Epsilon returns a valid epsilon for one shuffle at the given delta in (0,1).
func (s *ShuffleCurve) Epsilon(delta float64) (float64, error) {
	if err := checkOpenUnit("delta", delta); err != nil {
		return 0, err
	}
	s.mu.Lock()
	v, ok := s.cache[delta]
	s.mu.Unlock()
	if ok {
		return v, nil
	}
	eps := s.eps0
	if s.method == ShuffleClosedForm || s.method == ShuffleBest {
		cf, _, err := ClosedFormEpsilon(s.n, s.eps0, delta)
		if err != nil {
			return 0, err
		}
		eps = math.Min(eps, cf)
	}
	if s.method == ShuffleNumerical || s.method == ShuffleBest {
		// Cached neighbours bracket the answer (eps is non-increasing in
		// delta); the solver verifies the hints before using them.
		loHint, hiHint := 0.0, math.Inf(1)
		s.mu.Lock()
		dAbove, dBelow := math.Inf(1), 0.0
		for d, e := range s.numeric {
			if d > delta && d < dAbove {
				dAbove, loHint = d, e
			}
			if d < delta && d > dBelow {
				dBelow, hiHint = d, e
			}
		}
		s.mu.Unlock()
		iv, err := numericalEpsilonHinted(s.n, s.eps0, delta, false, loHint, hiHint)
		if err != nil {
			return 0, err
		}
		s.mu.Lock()
		s.numeric[delta] = iv.Upper
		s.mu.Unlock()
		eps = math.Min(eps, iv.Upper)
	}
	s.mu.Lock()
	s.cache[delta] = eps
	s.mu.Unlock()
	return eps, nil
}

// Composition is the (eps, delta) guarantee of T rounds of "sample k of n,
// shuffle the k reports" under the approximate-DP route, with the split of
// delta that produced it.
type Composition struct {
	Epsilon float64 // total epsilon after T rounds
	Delta   float64 // total delta actually used, <= the target
	Steps   int64

	ShuffleEpsilon float64 // one shuffle of k reports: (ShuffleEpsilon, ShuffleDelta)-DP
	ShuffleDelta   float64
	StepEpsilon    float64 // after subsampling (Ullman): one round is (StepEpsilon, StepDelta)-DP
	StepDelta      float64
	DeltaTilde     float64 // KOV15 composition slack
}

// ComposeAtSplit evaluates the pipeline at one fixed split: a shuffle that
// is (epsShuffle, deltaShuffle)-DP, subsampled with ratio gamma (Ullman),
// composed over steps rounds (KOV15) with slack deltaTilde.
func ComposeAtSplit(epsShuffle, deltaShuffle, gamma float64, steps int64, deltaTilde float64) (Composition, error) {
	e1, d1, err := UllmanSubsample(epsShuffle, deltaShuffle, gamma)
	if err != nil {
		return Composition{}, err
	}
	et, err := KOV15Epsilon(e1, steps, deltaTilde)
	if err != nil {
		return Composition{}, err
	}
	return Composition{
		Epsilon: et, Delta: KOV15Delta(d1, steps, deltaTilde), Steps: steps,
		ShuffleEpsilon: epsShuffle, ShuffleDelta: deltaShuffle,
		StepEpsilon: e1, StepDelta: d1, DeltaTilde: deltaTilde,
	}, nil
}

// SubsampledShuffleKOV15 returns the approximate-DP baseline (iv) of
// NeurIPS'21 Fig. 2 for T = steps rounds: each round samples a fraction
// gamma of the clients, shuffles their reports (curve gives the shuffle's
// eps(delta), at n := k reports), is amplified by subsampling (Ullman) and
// the rounds are composed by KOV15 Theorem 3.5, with the target delta
// split between T·gamma·deltaShuffle and the slack deltaTilde optimally.
//
// The optimisation searches deltaShuffle on a fixed log grid (2 points per
// decade, descending from the largest admissible value for up to 16
// decades and stopping two decades past the best point so far, plus
// deltaShuffle = 0 where one shuffle is (eps0, 0)-DP), then refines by 12
// golden-section steps in log deltaShuffle around the best grid point. For
// each candidate the largest deltaTilde that keeps the total delta <= delta
// is used (checked after rounding). The result is the bound's value at the
// best split found, so it is always a valid upper bound, whatever the
// search misses.
func SubsampledShuffleKOV15(curve *ShuffleCurve, gamma float64, steps int64, delta float64) (Composition, error) {
	if curve == nil {
		return Composition{}, fmt.Errorf("shuffle curve must not be nil")
	}
	if math.IsNaN(gamma) || gamma <= 0 || gamma > 1 {
		return Composition{}, errGamma(gamma)
	}
	if steps < 0 {
		return Composition{}, fmt.Errorf("steps must be >= 0, got %d", steps)
	}
	if err := checkOpenUnit("delta", delta); err != nil {
		return Composition{}, err
	}
	if steps == 0 {
		return Composition{Steps: 0}, nil
	}
	if steps == 1 && gamma == 1 {
		// A single shuffle: all of delta goes to it.
		eps, err := curve.Epsilon(delta)
		if err != nil {
			return Composition{}, err
		}
		return Composition{Epsilon: eps, Delta: delta, Steps: 1,
			ShuffleEpsilon: eps, ShuffleDelta: delta, StepEpsilon: eps, StepDelta: delta}, nil
	}

	// Candidate deltaShuffle = 0: the shuffle is (eps0, 0)-DP.
	best, err := ComposeAtSplit(curve.Eps0(), 0, gamma, steps, maxDeltaTilde(delta, 0, steps))
	if err != nil {
		return Composition{}, err
	}
	eval := func(ds float64) (Composition, bool, error) {
		if ds <= 0 || ds >= 1 {
			return Composition{}, false, nil
		}
		d1 := gamma * ds
		dt := maxDeltaTilde(delta, d1, steps)
		if dt <= 0 {
			return Composition{}, false, nil
		}
		es, err := curve.Epsilon(ds)
		if err != nil {
			return Composition{}, false, err
		}
		c, err := ComposeAtSplit(es, ds, gamma, steps, dt)
		if err != nil {
			return Composition{}, false, err
		}
		if c.Delta > delta {
			return Composition{}, false, nil
		}
		return c, true, nil
	}

	// Largest admissible deltaShuffle: T·gamma·ds < delta.
	dsMax := math.Min(delta/(gamma*float64(steps)), 1)
	const perDecade = 2
	jMin := int(math.Ceil(-perDecade * math.Log10(dsMax)))
	bestU := math.NaN()
	bestJ := -1
	for j := jMin; j <= jMin+16*perDecade; j++ {
		// Below the optimum the objective only grows (eps_shuffle rises as
		// delta_shuffle falls, and the slack gains nothing more); stop two
		// decades past the best point. Any stopping rule is safe: the
		// result is always the bound at a feasible split.
		if bestJ >= 0 && j-bestJ > 2*perDecade {
			break
		}
		ds := math.Pow(10, -float64(j)/perDecade)
		c, ok, err := eval(ds)
		if err != nil {
			return Composition{}, err
		}
		if ok && c.Epsilon < best.Epsilon {
			best, bestU, bestJ = c, logmath.Log(ds), j
		}
	}
	if !math.IsNaN(bestU) {
		// Golden-section refinement on [u - h, u + h], h = one grid step.
		h := math.Ln10 / perDecade
		a, b := bestU-h, math.Min(bestU+h, logmath.Log(dsMax))
		f := func(u float64) float64 {
			c, ok, err := eval(math.Exp(u))
			if err != nil || !ok {
				return math.Inf(1)
			}
			if c.Epsilon < best.Epsilon {
				best = c
			}
			return c.Epsilon
		}
		const invPhi = 0.6180339887498949
		x1, x2 := b-invPhi*(b-a), a+invPhi*(b-a)
		f1, f2 := f(x1), f(x2)
		for i := 0; i < 12; i++ {
			if f1 <= f2 {
				b, x2, f2 = x2, x1, f1
				x1 = b - invPhi*(b-a)
				f1 = f(x1)
			} else {
				a, x1, f1 = x1, x2, f2
				x2 = a + invPhi*(b-a)
				f2 = f(x2)
			}
		}
	}
	if math.IsNaN(best.Epsilon) || math.IsInf(best.Epsilon, 0) || best.Epsilon < 0 {
		return Composition{}, fmt.Errorf("approxdp: no valid delta split found (gamma=%g, steps=%d, delta=%g)", gamma, steps, delta)
	}
	return best, nil
}

// SubsampledShuffle is SubsampledShuffleKOV15 for k of n clients per round,
// with a fresh ShuffleCurve of k reports under method.
func SubsampledShuffle(n, k int64, eps0 float64, steps int64, delta float64, method ShuffleMethod) (Composition, error) {
	if err := checkN("n", n); err != nil {
		return Composition{}, err
	}
	if k < 1 || k > n {
		return Composition{}, fmt.Errorf("k must be in [1, n=%d], got %d", n, k)
	}
	curve, err := NewShuffleCurve(k, eps0, method)
	if err != nil {
		return Composition{}, err
	}
	return SubsampledShuffleKOV15(curve, float64(k)/float64(n), steps, delta)
}
