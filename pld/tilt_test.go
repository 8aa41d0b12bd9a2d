package pld

import (
	"math"
	"testing"
)

// TestFFTConvolveTiltedBound: the tilted FFT convolution (with its peaks
// taken out) against a double-double direct one. Its error, net of the
// relative bound, is within the stated bound in the tilted norm. Negative
// control: the same error in the plain L1 norm exceeds that number by far
// (below the bulk the untilted entries are round-off noise blown up by
// e^{tilt (ref - l)}), so the bound must not be charged as an L1 bound.
func TestFFTConvolveTiltedBound(t *testing.T) {
	const h = 1e-3
	for _, c := range []struct {
		n    int
		tilt float64
		peak float64 // mass of a point mass at loss 0 (the subsampled shuffle's shape)
	}{{3000, 0, 0}, {3000, 20, 0}, {5000, 60, 0}, {5000, 60, 0.7}} {
		lo := -c.n / 2
		v := make([]float64, c.n)
		s := 0.0
		for i := range v {
			z := float64(i-c.n/2) / (float64(c.n) / 14)
			v[i] = math.Exp(-z * z / 2)
			s += v[i]
		}
		for i := range v {
			v[i] *= (1 - c.peak) / s
		}
		v[c.n/2] += c.peak
		p := (&PLD{side: Pessimistic, h: h, lo: lo, mass: v}).tilted(c.tilt)
		spec := &tiltSpec{h: h, t: c.tilt, aLo: lo, bLo: lo, aRef: p.ref, bRef: p.ref}
		if c.tilt == 0 {
			spec = nil
		}
		got, rel, abs := convolvePeaks(v, v, spec)
		hi, lw := ddConvolve(v, v)
		var w []float64
		if c.tilt > 0 {
			w, _ = tiltWeights(2*lo, len(got), h, c.tilt, 2*p.ref)
		}
		tilted, plain := 0.0, 0.0
		for i := range got {
			d := math.Abs((got[i] - hi[i]) - lw[i])
			plain += d
			d = math.Max(0, d-rel*hi[i])
			if w != nil {
				d *= w[i]
			}
			tilted += d
		}
		if tilted > abs {
			t.Errorf("%+v: error %.3g in the tilted norm exceeds the bound %.3g", c, tilted, abs)
		}
		t.Logf("%+v: error %.3g (plain L1 %.3g), bound %.3g, rel %.3g", c, tilted, plain, abs, rel)
		if c.tilt >= 60 && plain <= 100*abs {
			t.Errorf("%+v: negative control: plain L1 error %.3g is not far above the tilted bound %.3g", c, plain, abs)
		}
	}
}
