package randomizer

import (
	"math"
	"testing"
)

func norms(x []float64) (l1, l2, linf float64) {
	for _, v := range x {
		l1 += math.Abs(v)
		l2 += v * v
		linf = math.Max(linf, math.Abs(v))
	}
	return l1, math.Sqrt(l2), linf
}

func TestClipTable(t *testing.T) {
	for _, tc := range []struct {
		norm     Norm
		x        []float64
		c        float64
		wantOrig float64
		want     []float64
	}{
		{NormL2, []float64{3, 4}, 1, 5, []float64{0.6, 0.8}},
		{NormL2, []float64{0.3, 0.4}, 1, 0.5, []float64{0.3, 0.4}},
		{NormL1, []float64{3, -1}, 2, 4, []float64{1.5, -0.5}},
		{NormL1, []float64{0.5, -0.5}, 2, 1, []float64{0.5, -0.5}},
		{NormLinf, []float64{3, -0.5, -7}, 1, 7, []float64{1, -0.5, -1}},
		{NormL2, []float64{math.NaN(), 1}, 1, math.NaN(), []float64{0, 0}},
		{NormL1, []float64{math.Inf(1), 1}, 1, math.Inf(1), []float64{0, 0}},
		{NormL2, []float64{1e300, 1e300}, 1, math.Sqrt2 * 1e300, []float64{math.Sqrt2 / 2, math.Sqrt2 / 2}},
		{NormNone, []float64{5}, 1, 0, []float64{5}},
		{NormLinf, []float64{0.5, math.NaN()}, 1, math.NaN(), []float64{0, 0}},
		{NormLinf, []float64{math.Inf(-1), 0.5}, 1, math.Inf(1), []float64{-1, 0.5}},
		{NormLinf, []float64{-0.0, 0.25}, 1, 0.25, []float64{0, 0.25}},
	} {
		x := append([]float64(nil), tc.x...)
		got := Clip(tc.norm, x, tc.c)
		if !(got == tc.wantOrig || math.IsNaN(got) && math.IsNaN(tc.wantOrig) || math.Abs(got-tc.wantOrig) <= 1e-15*tc.wantOrig) {
			t.Errorf("Clip(%v, %v, %g) returned %g, want %g", tc.norm, tc.x, tc.c, got, tc.wantOrig)
		}
		for i := range x {
			if math.Abs(x[i]-tc.want[i]) > 1e-15 {
				t.Errorf("Clip(%v, %v, %g) = %v, want %v", tc.norm, tc.x, tc.c, x, tc.want)
				break
			}
		}
	}
}

// ScaleLinf scales (NeurIPS'21 Algorithm 1) where ClipLinf clamps: the
// direction is kept, inputs inside the ball are untouched, non-finite
// vectors are zeroed.
func TestScaleLinf(t *testing.T) {
	for _, tc := range []struct {
		x        []float64
		c        float64
		wantOrig float64
		want     []float64
	}{
		{[]float64{4, -1, 2}, 2, 4, []float64{2, -0.5, 1}},
		{[]float64{0.5, -0.25}, 1, 0.5, []float64{0.5, -0.25}},
		{[]float64{-8, 0}, 0.5, 8, []float64{-0.5, 0}},
		{[]float64{0.5, math.NaN()}, 1, math.NaN(), []float64{0, 0}},
		{[]float64{math.Inf(-1), 0.5}, 1, math.Inf(1), []float64{0, 0}},
		{[]float64{}, 1, 0, []float64{}},
	} {
		x := append([]float64(nil), tc.x...)
		got := ScaleLinf(x, tc.c)
		if !(got == tc.wantOrig || math.IsNaN(got) && math.IsNaN(tc.wantOrig)) {
			t.Errorf("ScaleLinf(%v, %g) returned %g, want %g", tc.x, tc.c, got, tc.wantOrig)
		}
		for i := range x {
			if x[i] != tc.want[i] {
				t.Errorf("ScaleLinf(%v, %g) = %v, want %v", tc.x, tc.c, x, tc.want)
				break
			}
		}
	}
}

// FuzzClip: after clipping, the norm is within the radius (to the slack
// Randomize accepts), inputs inside the ball are unchanged, l_1/l_2 clipping
// preserves direction, and the clipped vector is accepted by the domain
// check of the matching randomizer.
func FuzzClip(f *testing.F) {
	f.Add(1.0, -2.0, 3.0, 0.5)
	f.Add(1e-300, 1e300, -1e300, 1e-3)
	f.Add(0.0, 0.0, 0.0, 1.0)
	f.Fuzz(func(t *testing.T, a, b, c, radius float64) {
		if !(radius > 1e-100 && radius < 1e100) {
			return
		}
		for _, n := range []Norm{NormL1, NormL2, NormLinf} {
			x := []float64{a, b, c}
			orig := append([]float64(nil), x...)
			Clip(n, x, radius)
			if err := checkDomain(x, 3, n, radius); err != nil {
				t.Fatalf("%v clip of %v at %g not in domain: %v (%v)", n, orig, radius, err, x)
			}
			l1, l2, li := norms(orig)
			inside := map[Norm]bool{NormL1: l1 <= radius, NormL2: l2 <= radius, NormLinf: li <= radius}[n]
			if inside && !math.IsInf(l1, 0) {
				for i := range x {
					if x[i] != orig[i] {
						t.Fatalf("%v clip changed %v inside the ball to %v", n, orig, x)
					}
				}
			}
			if n != NormLinf && !math.IsInf(l1, 0) && !math.IsNaN(l1) {
				for i := range x {
					if x[i] != 0 && math.Signbit(x[i]) != math.Signbit(orig[i]) {
						t.Fatalf("%v clip flipped a sign: %v → %v", n, orig, x)
					}
				}
			}
		}
	})
}
