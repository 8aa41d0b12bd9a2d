package features

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"
)

// naiveDFT is the O(n^2) definition of the transform fft computes.
func naiveDFT(x []complex128, inverse bool) []complex128 {
	n := len(x)
	sign := -1.0
	if inverse {
		sign = 1
	}
	out := make([]complex128, n)
	for k := range n {
		for t := range n {
			out[k] += x[t] * cmplx.Exp(complex(0, sign*2*math.Pi*float64(k*t)/float64(n)))
		}
	}
	return out
}

func TestFFTMatchesDFT(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 4, 8, 32} {
		f, err := newFFT(n)
		if err != nil {
			t.Fatal(err)
		}
		for _, inverse := range []bool{false, true} {
			x := make([]complex128, n)
			for i := range x {
				x[i] = complex(rng.NormFloat64(), rng.NormFloat64())
			}
			want := naiveDFT(x, inverse)
			f.transform(x, inverse)
			for i := range x {
				if cmplx.Abs(x[i]-want[i]) > 1e-11 {
					t.Fatalf("n=%d inverse=%v: X[%d] = %v, want %v", n, inverse, i, x[i], want[i])
				}
			}
		}
	}
	if _, err := newFFT(12); err == nil {
		t.Error("newFFT(12) accepted a length that is not a power of two")
	}
}

// circConv is the direct periodic convolution (a * b)[r,c] =
// sum_{u,v} a[u,v] b[(r-u) mod n, (c-v) mod n] on an n x n grid.
func circConv(a, b []complex128, n int) []complex128 {
	out := make([]complex128, n*n)
	for r := range n {
		for c := range n {
			var s complex128
			for u := range n {
				for v := range n {
					s += a[u*n+v] * b[((r-u+n)%n)*n+(c-v+n)%n]
				}
			}
			out[r*n+c] = s
		}
	}
	return out
}

// referenceScatter computes the unpooled coefficients from the definition:
// spatial filters, direct periodic convolutions, modulus, and the value of
// the low-pass output at every 2^J-th grid position.
func referenceScatter(s *Scatter, img []float64) []float64 {
	n, m, step := s.Grid, s.side, 1<<s.J
	filters := s.spatialFilters()
	psi, phi := filters[:len(filters)-1], filters[len(filters)-1]
	x := make([]complex128, n*n)
	r0, c0 := (n-s.Rows)/2, (n-s.Cols)/2
	for r := range s.Rows {
		for c := range s.Cols {
			x[(r+r0)*n+c+c0] = complex(img[r*s.Cols+c], 0)
		}
	}
	modulus := func(v []complex128) []complex128 {
		for i := range v {
			v[i] = complex(cmplx.Abs(v[i]), 0)
		}
		return v
	}
	var raw []float64
	emit := func(u []complex128) {
		low := circConv(u, phi, n)
		for r := range m {
			for c := range m {
				raw = append(raw, real(low[(r*step)*n+c*step]))
			}
		}
	}
	emit(x)
	var second []float64
	for j1 := range s.J {
		for l1 := range s.L {
			u1 := modulus(circConv(x, psi[j1*s.L+l1], n))
			emit(u1)
			keep := raw
			raw = nil
			for j2 := j1 + 1; j2 < s.J; j2++ {
				for l2 := range s.L {
					emit(modulus(circConv(u1, psi[j2*s.L+l2], n)))
				}
			}
			second = append(second, raw...)
			raw = keep
		}
	}
	return append(raw, second...)
}

func digit(rng *rand.Rand, rows, cols int) []float64 {
	img := make([]float64, rows*cols)
	for i := range img {
		if rng.IntN(4) == 0 {
			img[i] = rng.Float64()
		}
	}
	return img
}

// TestScatterMatchesReference compares the FFT path with the direct slow
// reference on a small image (J = 2 reaches the second order; a 12x12 image
// on a 16x16 grid keeps the O(n^4) reference fast).
func TestScatterMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct{ rows, cols, j, l int }{{12, 12, 2, 4}, {10, 7, 1, 3}, {12, 12, 2, 8}} {
		s, err := NewScatter(tc.rows, tc.cols, tc.j, tc.l, 1, NormNone, 1)
		if err != nil {
			t.Fatal(err)
		}
		w := s.NewWorker()
		img := digit(rng, tc.rows, tc.cols)
		w.scatter(img)
		want := referenceScatter(s, img)
		if len(want) != len(w.raw) {
			t.Fatalf("%+v: reference has %d coefficients, fast path %d", tc, len(want), len(w.raw))
		}
		var scale float64
		for _, v := range want {
			scale = max(scale, math.Abs(v))
		}
		for i := range want {
			if math.Abs(w.raw[i]-want[i]) > 1e-10*scale {
				t.Fatalf("%+v: coefficient %d = %g, reference %g", tc, i, w.raw[i], want[i])
			}
		}
	}
}

// TestScatterFilters checks the filter bank's defining properties: every
// wavelet has zero mean, the low-pass filter has unit sum, and the number of
// channels is 1 + J L + L^2 J (J-1) / 2 (81 for MNIST's J = 2, L = 8).
func TestScatterFilters(t *testing.T) {
	s, err := NewScatter(28, 28, 2, 8, 8, NormNone, 1)
	if err != nil {
		t.Fatal(err)
	}
	if s.Grid != 32 || s.Channels() != 81 || s.Dim() != 81*64 {
		t.Fatalf("grid %d, channels %d, dim %d; want 32, 81, 5184", s.Grid, s.Channels(), s.Dim())
	}
	for i, f := range s.psi {
		if cmplx.Abs(f[0]) > 1e-12 {
			t.Errorf("psi %d: DC response %v, want 0", i, f[0])
		}
	}
	if cmplx.Abs(s.phi[0]-1) > 1e-12 {
		t.Errorf("phi: DC response %v, want 1", s.phi[0])
	}
}

// TestPoolAndNormalise checks pooling against explicit block means and the
// two normalisations' invariants (unit l2 norm; zero mean and unit variance
// inside each group before the final scaling).
func TestPoolAndNormalise(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	img := digit(rng, 28, 28)
	full, _ := NewScatter(28, 28, 2, 8, 8, NormNone, 1)
	w := full.NewWorker()
	raw := make([]float64, full.Dim())
	w.Transform(img, raw)
	pooled, _ := NewScatter(28, 28, 2, 8, 2, NormNone, 1)
	out := make([]float64, pooled.Dim())
	pooled.NewWorker().Transform(img, out)
	for ch := range 81 {
		for pr := range 2 {
			for pc := range 2 {
				var sum float64
				for r := range 4 {
					for c := range 4 {
						sum += raw[ch*64+(pr*4+r)*8+pc*4+c]
					}
				}
				if got := out[ch*4+pr*2+pc]; math.Abs(got-sum/16) > 1e-12 {
					t.Fatalf("channel %d block (%d,%d): %g, want %g", ch, pr, pc, got, sum/16)
				}
			}
		}
	}
	g, _ := NewScatter(28, 28, 2, 8, 2, NormGroup, 27)
	gout := make([]float64, g.Dim())
	g.NewWorker().Transform(img, gout)
	var ss float64
	for _, v := range gout {
		ss += v * v
	}
	if math.Abs(ss-1) > 1e-12 {
		t.Errorf("group norm: squared l2 norm %g, want 1", ss)
	}
	size := 27 * 4
	for start := 0; start < len(gout); start += size {
		var mean float64
		for _, v := range gout[start : start+size] {
			mean += v
		}
		if math.Abs(mean) > 1e-12 {
			t.Errorf("group at %d: mean %g, want 0", start, mean)
		}
	}
	// Every group has the same variance before the unit scaling.
	var first float64
	for start := 0; start < len(gout); start += size {
		var v2 float64
		for _, v := range gout[start : start+size] {
			v2 += v * v
		}
		if start == 0 {
			first = v2
		} else if math.Abs(v2-first) > 1e-12 {
			t.Errorf("group at %d: sum of squares %g, first group %g", start, v2, first)
		}
	}
}

func TestNewScatterRejects(t *testing.T) {
	for _, tc := range []struct {
		j, l, pool int
		norm       string
		groups     int
	}{{0, 8, 2, NormNone, 1}, {2, 0, 2, NormNone, 1}, {2, 8, 3, NormNone, 1}, {2, 8, 2, "batch", 1}, {2, 8, 2, NormGroup, 4}} {
		if _, err := NewScatter(28, 28, tc.j, tc.l, tc.pool, tc.norm, tc.groups); err == nil {
			t.Errorf("%+v accepted", tc)
		}
	}
}

func BenchmarkScatterMNIST(b *testing.B) {
	s, _ := NewScatter(28, 28, 2, 8, 2, NormGroup, 27)
	w := s.NewWorker()
	img := digit(rand.New(rand.NewPCG(1, 1)), 28, 28)
	out := make([]float64, s.Dim())
	b.ReportAllocs()
	for b.Loop() {
		w.Transform(img, out)
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/example")
}
