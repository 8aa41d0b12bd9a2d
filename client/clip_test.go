package client

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/shuffledp/shuffledp/protocol"
)

// TestClip checks Algorithm 1, line 6, g <- g / max(1, ||g||_p/C),
// against a direct evaluation of the formula, for every norm, on vectors
// inside and outside the ball, including lengths that are not multiples of
// the unrolling width.
func TestClip(t *testing.T) {
	norm := func(p string, g []float64) float64 {
		var s float64
		for _, v := range g {
			switch p {
			case protocol.NormL1:
				s += math.Abs(v)
			case protocol.NormL2:
				s += v * v
			case protocol.NormLInf:
				s = math.Max(s, math.Abs(v))
			}
		}
		if p == protocol.NormL2 {
			s = math.Sqrt(s)
		}
		return s
	}
	r := rand.New(rand.NewPCG(3, 4))
	for _, p := range []string{protocol.NormL1, protocol.NormL2, protocol.NormLInf} {
		for _, d := range []int{1, 3, 4, 7, 26010} {
			for _, c := range []float64{1e-3, 0.5, 1e3} {
				g := make([]float64, d)
				for i := range g {
					g[i] = r.NormFloat64()
				}
				want := make([]float64, d)
				f := math.Max(1, norm(p, g)/c)
				for i := range g {
					want[i] = g[i] / f
				}
				Clip(g, p, c, false)
				for i := range g {
					if math.Abs(g[i]-want[i]) > 1e-12*math.Abs(want[i])+1e-300 {
						t.Fatalf("%s d=%d C=%g: g[%d] = %g, want %g", p, d, c, i, g[i], want[i])
					}
				}
				if n := norm(p, g); n > c*(1+1e-12) {
					t.Fatalf("%s d=%d C=%g: clipped norm %g exceeds C", p, d, c, n)
				}
			}
		}
		// Non-finite gradients are zeroed; the zero vector stays zero.
		for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
			g := []float64{1, 2, bad, 4, 5}
			Clip(g, p, 1, false)
			for i, v := range g {
				if v != 0 {
					t.Fatalf("%s with %v: g[%d] = %g, want 0", p, bad, i, v)
				}
			}
		}
		z := make([]float64, 9)
		Clip(z, p, 1, false)
		for _, v := range z {
			if v != 0 {
				t.Fatalf("%s: zero vector changed", p)
			}
		}
		// Tiny and huge entries (the l2 fast path falls back to scaling).
		for _, scale := range []float64{1e-200, 1e200} {
			g := []float64{3 * scale, 4 * scale}
			Clip(g, p, 1, false)
			if n := norm(p, g); !(n <= 1*(1+1e-12)) || math.IsNaN(n) {
				t.Fatalf("%s scale %g: norm after clipping %g", p, scale, n)
			}
		}
	}
}

func BenchmarkClipLinf(b *testing.B) {
	g := make([]float64, 26010)
	r := rand.New(rand.NewPCG(1, 1))
	for i := range g {
		g[i] = r.NormFloat64()
	}
	for b.Loop() {
		Clip(g, protocol.NormLInf, 1e6, false)
	}
}

func BenchmarkClipL2(b *testing.B) {
	g := make([]float64, 26010)
	r := rand.New(rand.NewPCG(1, 1))
	for i := range g {
		g[i] = r.NormFloat64()
	}
	for b.Loop() {
		Clip(g, protocol.NormL2, 1e6, false)
	}
}
