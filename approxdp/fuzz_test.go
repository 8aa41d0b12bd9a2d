package approxdp

import (
	"math"
	"testing"
)

func FuzzNumericalDelta(f *testing.F) {
	f.Add(int64(1), 1.0, 0.5)
	f.Add(int64(1000), 4.0, 0.1)
	f.Add(int64(50000), 0.1, 0.0)
	f.Add(int64(7), 30.0, 29.0)
	f.Fuzz(func(t *testing.T, n int64, eps0, eps float64) {
		if n > 200000 {
			n = 200000 // keep each case fast
		}
		iv, err := NumericalDelta(n, eps0, eps)
		if err != nil {
			return
		}
		if math.IsNaN(iv.Lower) || math.IsNaN(iv.Upper) || iv.Lower < 0 || iv.Upper > 1 || iv.Lower > iv.Upper {
			t.Fatalf("NumericalDelta(%d, %g, %g) = %+v", n, eps0, eps, iv)
		}
	})
}

func FuzzNumericalEpsilon(f *testing.F) {
	f.Add(int64(100), 1.0, 1e-6)
	f.Add(int64(3), 8.0, 0.3)
	f.Add(int64(20000), 0.01, 1e-12)
	f.Fuzz(func(t *testing.T, n int64, eps0, delta float64) {
		if n > 20000 {
			n = 20000
		}
		iv, err := NumericalEpsilon(n, eps0, delta)
		if err != nil {
			return
		}
		if math.IsNaN(iv.Upper) || iv.Lower < 0 || iv.Lower > iv.Upper || iv.Upper > eps0 {
			t.Fatalf("NumericalEpsilon(%d, %g, %g) = %+v", n, eps0, delta, iv)
		}
		cf, _, err := ClosedFormEpsilon(n, eps0, delta)
		if err != nil || math.IsNaN(cf) || cf < 0 || cf > eps0 {
			t.Fatalf("ClosedFormEpsilon(%d, %g, %g) = %g, %v", n, eps0, delta, cf, err)
		}
	})
}

func FuzzSubsampledShuffle(f *testing.F) {
	f.Add(int64(1000), int64(10), 1.0, int64(100), 1e-8)
	f.Add(int64(5), int64(5), 0.0, int64(1), 0.5)
	f.Add(int64(1e9), int64(1), 10.0, int64(1e9), 1e-300)
	f.Fuzz(func(t *testing.T, n, k int64, eps0 float64, steps int64, delta float64) {
		if k > 300 {
			k = 300 // the shuffle is over k reports; keep it fast
		}
		r, err := SubsampledShuffle(n, k, eps0, steps, delta, ShuffleBest)
		if err != nil {
			return
		}
		if math.IsNaN(r.Epsilon) || math.IsInf(r.Epsilon, 0) || r.Epsilon < 0 || r.Delta > delta || r.Delta < 0 {
			t.Fatalf("SubsampledShuffle(%d,%d,%g,%d,%g) = %+v", n, k, eps0, steps, delta, r)
		}
	})
}
