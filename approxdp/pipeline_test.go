package approxdp

import (
	"math"
	"testing"
)

func TestKOV15Properties(t *testing.T) {
	prev := 0.0
	for _, T := range []int64{0, 1, 2, 10, 100, 1e4, 1e6} {
		e, err := KOV15Epsilon(0.01, T, 1e-8)
		if err != nil {
			t.Fatal(err)
		}
		if e < prev || e > float64(T)*0.01*(1+1e-13) {
			t.Errorf("T=%d: %g (prev %g), must be non-decreasing and <= T eps", T, e, prev)
		}
		prev = e
	}
	prev = math.Inf(1)
	for _, dt := range []float64{1e-12, 1e-8, 1e-4, 0.5, 1} {
		e, _ := KOV15Epsilon(0.01, 1000, dt)
		if e > prev {
			t.Errorf("KOV15 increased with delta-tilde at %g", dt)
		}
		prev = e
	}
	if d := KOV15Delta(1e-14, 100000, 1e-9); math.Abs(d-(1e-9+1e-9)) > 1e-15 {
		t.Errorf("KOV15Delta = %g, want about 2e-9", d)
	}
}

func TestSubsampledShuffleProperties(t *testing.T) {
	const n, k, delta = int64(100000), int64(500), 1e-8
	// Non-decreasing in T, and consistent with its own split.
	prev := 0.0
	for _, T := range []int64{0, 1, 10, 100, 1000, 10000} {
		r, err := SubsampledShuffle(n, k, 2, T, delta, ShuffleBest)
		if err != nil {
			t.Fatal(err)
		}
		if r.Epsilon < prev*(1-1e-9) {
			t.Errorf("T=%d: eps %g below eps at fewer rounds %g", T, r.Epsilon, prev)
		}
		if r.Delta > delta || r.Epsilon < 0 || math.IsNaN(r.Epsilon) {
			t.Errorf("T=%d: result %+v violates delta=%g", T, r, delta)
		}
		if T > 0 {
			c, err := ComposeAtSplit(r.ShuffleEpsilon, r.ShuffleDelta, float64(k)/float64(n), T, r.DeltaTilde)
			if err != nil || c.Epsilon != r.Epsilon || c.Delta > delta {
				t.Errorf("T=%d: reported split does not reproduce: %+v vs %+v (%v)", T, c, r, err)
			}
			// The shuffle's own claim is certified: by the clones divergence
			// at that eps, or by the closed form.
			if r.ShuffleDelta > 0 {
				d, err := NumericalDelta(k, 2, r.ShuffleEpsilon)
				cf, valid, _ := ClosedFormEpsilon(k, 2, r.ShuffleDelta)
				if err != nil || (d.Upper > r.ShuffleDelta && !(valid && cf <= r.ShuffleEpsilon)) {
					t.Errorf("T=%d: shuffle (%g, %g) not certified: clones delta %g, closed form %g (valid %v)",
						T, r.ShuffleEpsilon, r.ShuffleDelta, d.Upper, cf, valid)
				}
			}
		}
		prev = r.Epsilon
	}
	// Non-increasing in delta; non-decreasing in eps0.
	prev = math.Inf(1)
	for _, d := range []float64{1e-12, 1e-9, 1e-6, 1e-3} {
		r, err := SubsampledShuffle(n, k, 2, 1000, d, ShuffleBest)
		if err != nil {
			t.Fatal(err)
		}
		if r.Epsilon > prev*(1+1e-9) {
			t.Errorf("eps increased with delta at %g", d)
		}
		prev = r.Epsilon
	}
	prev = 0
	for _, e0 := range []float64{0, 0.5, 1, 2, 4} {
		r, err := SubsampledShuffle(n, k, e0, 1000, delta, ShuffleBest)
		if err != nil {
			t.Fatal(err)
		}
		if r.Epsilon < prev*(1-1e-9) {
			t.Errorf("eps decreased with eps0 at %g", e0)
		}
		prev = r.Epsilon
	}
	// Best is no worse than either single method.
	best, _ := SubsampledShuffle(n, k, 1, 1000, delta, ShuffleBest)
	for _, m := range []ShuffleMethod{ShuffleClosedForm, ShuffleNumerical} {
		r, err := SubsampledShuffle(n, k, 1, 1000, delta, m)
		if err != nil {
			t.Fatal(err)
		}
		if best.Epsilon > r.Epsilon*(1+1e-6) {
			t.Errorf("best %g worse than %v %g", best.Epsilon, m, r.Epsilon)
		}
	}
}

// A single shuffle of all n reports spends all of delta on it.
func TestSingleShuffle(t *testing.T) {
	r, err := SubsampledShuffle(100000, 100000, 4, 1, 1e-6, ShuffleNumerical)
	if err != nil {
		t.Fatal(err)
	}
	iv, _ := NumericalEpsilon(100000, 4, 1e-6)
	if r.Epsilon != iv.Upper || r.Delta != 1e-6 {
		t.Errorf("single shuffle %+v, want eps %g", r, iv.Upper)
	}
}
