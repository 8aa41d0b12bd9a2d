package route

import (
	"sync"

	"github.com/shuffledp/shuffledp/accounting"
	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/sampledgauss"
)

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
func sampledGaussianCurve(e event.Event, bound string) (accounting.RDP, error) {
	if bound == "" {
		bound = accounting.BoundBest
	}
	switch bound {
	case BoundMTZ19, BoundGaussianCor1, accounting.BoundBest:
	default:
		return nil, unknownBound(e, bound)
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
