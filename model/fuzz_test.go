package model

import (
	"math"
	"testing"
)

// FuzzCNNGradientMatchesNaive feeds arbitrary images (bytes scaled to
// [0, 1], any sparsity, including all-zero and all-saturated ones) to a
// small CNN with each activation and checks the optimized worker against
// the naive dense baseline, and that loss and gradient are finite.
func FuzzCNNGradientMatchesNaive(f *testing.F) {
	f.Add(make([]byte, 170))
	full := make([]byte, 170)
	for i := range full {
		full[i] = 255
	}
	f.Add(full)
	ramp := make([]byte, 170)
	for i := range ramp {
		ramp[i] = byte(i * 37)
	}
	f.Add(ramp)
	var ms []*CNN
	for _, act := range []Activation{ReLU, Tanh} {
		m, err := NewCNNWithConfig(CNNConfig{Height: 13, Width: 13, Filters1: 3, Filters2: 4, Hidden: 5, Classes: 3, Activation: act})
		if err != nil {
			f.Fatal(err)
		}
		for i := range m.params {
			m.params[i] += 0.01 * math.Sin(float64(i)) // non-zero biases
		}
		ms = append(ms, m)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) < 170 {
			return
		}
		x := make([]float64, 169)
		for i := range x {
			x[i] = float64(b[i+1]) / 255
		}
		label := int(b[0]) % 3
		for _, m := range ms {
			g := make([]float64, m.NumParams())
			gn := make([]float64, m.NumParams())
			l := m.NewWorker().Gradient(x, label, g)
			ln := naiveCNNGradient(m, x, label, gn)
			if math.IsNaN(l) || math.IsInf(l, 0) || math.Abs(l-ln) > 1e-12*math.Max(1, ln) {
				t.Fatalf("%s: loss %g, naive %g", m.Name(), l, ln)
			}
			for i := range g {
				if math.IsNaN(g[i]) || math.Abs(g[i]-gn[i]) > 1e-12+1e-10*math.Abs(gn[i]) {
					t.Fatalf("%s: grad[%d] = %g, naive %g", m.Name(), i, g[i], gn[i])
				}
			}
		}
	})
}
