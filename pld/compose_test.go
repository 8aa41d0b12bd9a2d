package pld

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestFFTConvolveBound: the FFT convolution differs from the direct one by
// less than its stated L1 error bound, on probability vectors shaped like
// PLDs (a bulk, tails spanning many orders of magnitude).
func TestFFTConvolveBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{300, 2000, 5000} {
		mk := func() []float64 {
			v := make([]float64, n)
			s := 0.0
			for i := range v {
				z := (float64(i) - float64(n)/2) / (float64(n) / 12)
				v[i] = math.Exp(-z*z/2) * (0.5 + rng.Float64())
				s += v[i]
			}
			for i := range v {
				v[i] /= s
			}
			return v
		}
		a, b := mk(), mk()
		hi, lo := ddConvolve(a, b)
		fft, _, bound := fftConvolve(a, b)
		diff := 0.0
		for i := range hi {
			diff += math.Abs((fft[i] - hi[i]) - lo[i])
		}
		if diff > bound {
			t.Errorf("n=%d: FFT error %.3g exceeds its bound %.3g", n, diff, bound)
		}
		t.Logf("n=%d: L1 difference %.3g, bound %.3g", n, diff, bound)
	}
}

// TestComposeFFT: a dense PLD (the Gaussian's) squared goes through the
// FFT, and the result still brackets the closed form
// Phi(-eps s + 1/(2s)) - e^eps Phi(-eps s - 1/(2s)) at s = sigma/sqrt 2.
func TestComposeFFT(t *testing.T) {
	const sigma = 1.0
	m := &gaussianMech{sigma: sigma, steps: 1}
	b, _, err := m.round(1e-3)
	if err != nil {
		t.Fatal(err)
	}
	sq, err := b.Compose(b)
	if err != nil {
		t.Fatal(err)
	}
	if _, abs := sq.Pess.ErrBounds(); abs == 0 {
		t.Fatalf("the square did not use the FFT (len %d)", b.Pess.Len())
	}
	s := sigma / math.Sqrt2
	phi := func(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }
	for _, eps := range []float64{0, 1, 2, 4} {
		ex := phi(-eps*s+1/(2*s)) - math.Exp(eps)*phi(-eps*s-1/(2*s))
		iv, _ := sq.Delta(eps)
		if iv.Lower > ex*(1+1e-12) || iv.Upper < ex*(1-1e-12) {
			t.Errorf("eps %v: closed form %.15g outside %v", eps, ex, iv)
		}
	}
}

// ddConvolve is the convolution in double-double arithmetic (error-free
// products by FMA, compensated sums): hi + lo is exact to about 1e-30
// relative.
func ddConvolve(a, b []float64) (hi, lo []float64) {
	n := len(a) + len(b) - 1
	hi, lo = make([]float64, n), make([]float64, n)
	for i, x := range a {
		for j, y := range b {
			p := x * y
			e := math.FMA(x, y, -p)
			k := i + j
			s := hi[k] + p
			bb := s - hi[k]
			err := (hi[k] - (s - bb)) + (p - bb)
			hi[k] = s
			lo[k] += err + e
		}
	}
	return hi, lo
}
