package figures

import (
	"sync"

	"github.com/shuffledp/shuffledp/approxdp"
)

// FMT20KOV15Label is the label of the approximate-DP baseline, curve (iv) of
// NeurIPS'21 Fig. 2, with the best FMT20 shuffle bound (numerical clones
// bound or closed form, whichever is smaller).
const FMT20KOV15Label = "fmt20+kov15"

// FMT20AnalyticKOV15Label is the same pipeline with the FMT20 closed form
// only (eps0 per shuffle where the closed form's condition fails).
const FMT20AnalyticKOV15Label = "fmt20-analytic+kov15"

// FMT20KOV15 is the approximate-DP baseline: FMT20 shuffling (the smaller of
// the closed form and the numerical clones bound, at n := k reports), Ullman
// subsampling and KOV15 strong composition, with the delta split optimised
// (approxdp.SubsampledShuffleKOV15). Shuffle curves are cached per (k, eps0)
// so that a sweep over T reuses every single-shuffle evaluation.
type FMT20KOV15 struct {
	method approxdp.ShuffleMethod
	mu     sync.Mutex
	curves map[curveKey]*approxdp.ShuffleCurve
}

type curveKey struct {
	k    int64
	eps0 float64
}

// NewFMT20KOV15 returns the baseline (best FMT20 shuffle bound) with an
// empty cache.
func NewFMT20KOV15() *FMT20KOV15 {
	return &FMT20KOV15{method: approxdp.ShuffleBest, curves: map[curveKey]*approxdp.ShuffleCurve{}}
}

// NewFMT20AnalyticKOV15 returns the baseline restricted to the FMT20 closed
// form, the variant the papers' headline ratios appear to use (see
// docs/approximate-dp.md).
func NewFMT20AnalyticKOV15() *FMT20KOV15 {
	return &FMT20KOV15{method: approxdp.ShuffleClosedForm, curves: map[curveKey]*approxdp.ShuffleCurve{}}
}

// Label implements Bound.
func (b *FMT20KOV15) Label() string {
	if b.method == approxdp.ShuffleClosedForm {
		return FMT20AnalyticKOV15Label
	}
	return FMT20KOV15Label
}

// Upper implements Bound.
func (*FMT20KOV15) Upper() bool { return true }

// Epsilon implements Bound.
func (b *FMT20KOV15) Epsilon(s Setting) (float64, error) {
	c, err := b.Compose(s)
	return c.Epsilon, err
}

// Compose returns the full composition (with its delta split) at s.
func (b *FMT20KOV15) Compose(s Setting) (approxdp.Composition, error) {
	key := curveKey{s.K, s.Eps0}
	b.mu.Lock()
	curve, ok := b.curves[key]
	b.mu.Unlock()
	if !ok {
		var err error
		curve, err = approxdp.NewShuffleCurve(s.K, s.Eps0, b.method)
		if err != nil {
			return approxdp.Composition{}, err
		}
		b.mu.Lock()
		b.curves[key] = curve
		b.mu.Unlock()
	}
	if s.N < s.K {
		return approxdp.SubsampledShuffle(s.N, s.K, s.Eps0, s.Steps, s.Delta, b.method) // reports the error
	}
	return approxdp.SubsampledShuffleKOV15(curve, float64(s.K)/float64(s.N), s.Steps, s.Delta)
}
