package event

import (
	"fmt"
	"math"
	"strconv"
	"sync"

	"github.com/shuffledp/shuffledp/accounting"
	"github.com/shuffledp/shuffledp/sampledgauss"
)

// SampledGaussian is the central-DP baseline of DP-SGD, the sampled
// Gaussian mechanism: every client (record) is included independently with
// probability rate (Poisson sampling), the included clipped contributions
// are summed, and a trusted server adds one N(0, sigma^2 I) (sigma in units
// of the L2 sensitivity). There is no shuffler. Its RDP is exact
// (Mironov, Talwar, Zhang 2019; package sampledgauss) and rests on no
// assumption.
const SampledGaussian = "sampled-gaussian"

// BoundMTZ19 is the RDP of the sampled Gaussian mechanism, log(A_alpha)/(alpha-1)
// of Mironov, Talwar and Zhang 2019, Sec. 3 (exact; integer orders by
// Sec. 3.3, fractional ones by Sec. 3.4 with a proven remainder bound).
const BoundMTZ19 = "mtz19"

// sampledGaussianBounds lists the bounds of sampled-gaussian: the exact RDP,
// the Gaussian mechanism without sampling for comparison (no amplification),
// and "best" (their pointwise minimum, always won by mtz19).
func sampledGaussianBounds() []Bound {
	return []Bound{
		{Name: BoundMTZ19, Description: "Mironov-Talwar-Zhang 2019: the exact RDP of the Poisson-sampled Gaussian mechanism, every real order"},
		{Name: BoundGaussianCor1, Description: "lambda/(2 sigma^2): the Gaussian mechanism without sampling (no amplification), for comparison"},
		{Name: accounting.BoundBest, Description: "at every order the smaller of mtz19 and gaussian-cor1 (mtz19 never exceeds it)"},
	}
}

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

// sampledGaussianCurves memoises the curves per (rate, sigma, bound), each
// with its values per order, so that calibrating the number of rounds or
// pricing every round of a training run costs a lookup per order.
var sampledGaussianCurves = struct {
	sync.Mutex
	m map[sampledGaussianKey]accounting.RDP
}{m: map[sampledGaussianKey]accounting.RDP{}}

type sampledGaussianKey struct {
	rate, sigma float64
	bound       string
}

// sampledGaussianCurve returns the curve of a validated sampled-gaussian
// event under bound ("" is best).
func sampledGaussianCurve(e Event, bound string) (accounting.RDP, error) {
	if bound == "" {
		bound = accounting.BoundBest
	}
	switch bound {
	case BoundMTZ19, BoundGaussianCor1, accounting.BoundBest:
	default:
		return nil, e.unknownBound(bound)
	}
	key := sampledGaussianKey{e.Rate, e.Sigma, bound} // the same curve for add-remove and zero-out
	sampledGaussianCurves.Lock()
	defer sampledGaussianCurves.Unlock()
	if c, ok := sampledGaussianCurves.m[key]; ok {
		return c, nil
	}
	var c accounting.RDP
	switch bound {
	case BoundGaussianCor1:
		c = gaussianRDP{sigma: e.Sigma}
	default:
		sg, err := sampledgauss.New(e.Rate, e.Sigma)
		if err != nil {
			return nil, err
		}
		c = namedCurve{sg, BoundMTZ19}
		if bound == accounting.BoundBest {
			best, err := accounting.NewBest(c, gaussianRDP{sigma: e.Sigma})
			if err != nil {
				return nil, err
			}
			c = best
		}
	}
	if len(sampledGaussianCurves.m) >= 256 { // calibration visits many sigmas; bound the memory
		clear(sampledGaussianCurves.m)
	}
	var mc accounting.RDP = &memoCurve{curve: c, values: map[float64]memoValue{}}
	if w, ok := c.(winnerCurve); ok {
		mc = memoBestCurve{mc.(*memoCurve), w}
	}
	sampledGaussianCurves.m[key] = mc
	return mc, nil
}

// memoCurve caches a curve's values (and errors) per order.
type memoCurve struct {
	curve  accounting.RDP
	mu     sync.Mutex
	values map[float64]memoValue
}

type memoValue struct {
	v   float64
	err error
}

func (c *memoCurve) Name() string { return c.curve.Name() }

func (c *memoCurve) RDP(order float64) (float64, error) {
	c.mu.Lock()
	r, ok := c.values[order]
	c.mu.Unlock()
	if ok {
		return r.v, r.err
	}
	v, err := c.curve.RDP(order)
	c.mu.Lock()
	c.values[order] = memoValue{v, err}
	c.mu.Unlock()
	return v, err
}

// memoBestCurve is a memoised "best" curve that still names its winner.
type memoBestCurve struct {
	*memoCurve
	best winnerCurve
}

// RDPWinner names the component that wins at order.
func (c memoBestCurve) RDPWinner(order float64) (float64, string, error) {
	return c.best.RDPWinner(order)
}

// resetSampledGaussianCaches drops the memoised curves.
func resetSampledGaussianCaches() {
	sampledGaussianCurves.Lock()
	clear(sampledGaussianCurves.m)
	sampledGaussianCurves.Unlock()
}
