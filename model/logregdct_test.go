package model

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestDCTSumZeroBasis: the columns of H are orthonormal and orthogonal to
// the all-ones vector, for several class counts.
func TestDCTSumZeroBasis(t *testing.T) {
	for _, k := range []int{2, 3, 10, 17} {
		h := DCTSumZeroBasis(k)
		for a := range k - 1 {
			var ones float64
			for c := range k {
				ones += h[c*(k-1)+a]
			}
			if math.Abs(ones) > 1e-13 {
				t.Errorf("k=%d: column %d sums to %g, want 0", k, a, ones)
			}
			for b := range k - 1 {
				var dot float64
				for c := range k {
					dot += h[c*(k-1)+a] * h[c*(k-1)+b]
				}
				want := 0.0
				if a == b {
					want = 1
				}
				if math.Abs(dot-want) > 1e-13 {
					t.Errorf("k=%d: <h_%d, h_%d> = %g, want %g", k, a, b, dot, want)
				}
			}
		}
	}
}

func TestLogRegDCTGradientFiniteDifferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	m, err := NewLogRegDCT(7, 4)
	if err != nil {
		t.Fatal(err)
	}
	perturb(m, rng, 0.5)
	for label := range 4 {
		checkGradient(t, m, randomInput(rng, 7), label, nil)
	}
}

// TestLogRegDCTGradientCoordinate: every coordinate (weights and
// intercepts) equals Gradient's bit for bit; a NaN input is not certified.
func TestLogRegDCTGradientCoordinate(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 28))
	m, err := NewLogRegDCT(37, 5)
	if err != nil {
		t.Fatal(err)
	}
	perturbParams(rng, m.Params(), 0.3)
	checkCoordinates(t, m, coordTestImages(rng, 6, 37, 1), rng, func(int) bool { return true })
	x := make([]float64, 37)
	x[3] = math.NaN()
	if _, _, certified := m.NewWorker().(CoordinateWorker).GradientCoordinate(x, 1, 0); certified {
		t.Error("a NaN input was certified finite")
	}
}

// TestLogRegDCTIsLogReg: LogRegDCT with parameters V is LogReg with
// W = H V[:, :D] and b = s H V[:, D]: the same loss, logits that differ by
// one common shift, and the gradient H^T (LogReg's gradient) row by row
// (times s for the intercepts): the reparametrisation the doc comment
// claims, checked against LogReg's own code.
func TestLogRegDCTIsLogReg(t *testing.T) {
	const d, k = 11, 6
	rng := rand.New(rand.NewPCG(9, 10))
	m, err := NewLogRegDCT(d, k)
	if err != nil {
		t.Fatal(err)
	}
	perturbParams(rng, m.Params(), 0.7)
	h, s := m.Basis()
	if s != 1/math.Sqrt(d) {
		t.Fatalf("s = %g, want 1/sqrt(%d)", s, d)
	}
	lr, err := NewLogReg(d, k)
	if err != nil {
		t.Fatal(err)
	}
	v := m.Params()
	for c := range k {
		for i := range d + 1 {
			var sum float64
			for a := range k - 1 {
				sum += h[c*(k-1)+a] * v[a*(d+1)+i]
			}
			if i == d {
				lr.Params()[k*d+c] = s * sum
			} else {
				lr.Params()[c*d+i] = sum
			}
		}
	}
	wd, wl := m.NewWorker(), lr.NewWorker()
	gd, gl := make([]float64, m.NumParams()), make([]float64, lr.NumParams())
	zd, zl := make([]float64, k), make([]float64, k)
	for n := range 5 {
		x := randomInput(rng, d)
		label := n % k
		wd.Logits(x, zd)
		wl.Logits(x, zl)
		for c := 1; c < k; c++ {
			if diff := (zd[c] - zd[0]) - (zl[c] - zl[0]); math.Abs(diff) > 1e-12 {
				t.Fatalf("logit differences differ by %g", diff)
			}
		}
		ld, ll := wd.Gradient(x, label, gd), wl.Gradient(x, label, gl)
		if math.Abs(ld-ll) > 1e-12 {
			t.Fatalf("loss %g, LogReg's %g", ld, ll)
		}
		for a := range k - 1 {
			for i := range d + 1 {
				var want float64
				for c := range k {
					if i == d {
						want += h[c*(k-1)+a] * gl[k*d+c] * s
					} else {
						want += h[c*(k-1)+a] * gl[c*d+i]
					}
				}
				if got := gd[a*(d+1)+i]; math.Abs(got-want) > 1e-12 {
					t.Fatalf("gradient (%d, %d) = %g, want %g", a, i, got, want)
				}
			}
		}
	}
}
