package model

import (
	"math"
	"math/rand/v2"
	"testing"
)

func randVec(rng *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	return v
}

func close(a, b float64) bool { return math.Abs(a-b) <= 1e-12*(1+math.Abs(a)+math.Abs(b)) }

// TestKernelsMatchReference checks the dispatched kernels (assembly where
// available) against plain loops for every length 0..40 (all tail cases).
func TestKernelsMatchReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	t.Logf("useAVX2 = %v", useAVX2)
	for n := 0; n <= 40; n++ {
		a := randVec(rng, 4)
		x := [4][]float64{randVec(rng, n+3), randVec(rng, n+3), randVec(rng, n+3), randVec(rng, n+3)}
		w := randVec(rng, n+1)
		dst := randVec(rng, n+2)

		got := append([]float64(nil), dst...)
		axpy(got, a[0], x[0][:n])
		for i := range got {
			want := dst[i]
			if i < n {
				want += a[0] * x[0][i]
			}
			if !close(got[i], want) {
				t.Fatalf("axpy n=%d: [%d] = %g, want %g", n, i, got[i], want)
			}
		}

		got = append([]float64(nil), dst...)
		axpy4(got[:n], a[0], a[1], a[2], a[3], x[0], x[1], x[2], x[3])
		for i := range got {
			want := dst[i]
			if i < n {
				want += a[0]*x[0][i] + a[1]*x[1][i] + a[2]*x[2][i] + a[3]*x[3][i]
			}
			if !close(got[i], want) {
				t.Fatalf("axpy4 n=%d: [%d] = %g, want %g", n, i, got[i], want)
			}
		}

		got = append([]float64(nil), dst...)
		s0, s1, s2, s3 := axpyDot4(got[:n], w, a[0], a[1], a[2], a[3], x[0], x[1], x[2], x[3])
		var ws [4]float64
		for i := range got {
			want := dst[i]
			if i < n {
				want += a[0]*x[0][i] + a[1]*x[1][i] + a[2]*x[2][i] + a[3]*x[3][i]
				for j := range 4 {
					ws[j] += w[i] * x[j][i]
				}
			}
			if !close(got[i], want) {
				t.Fatalf("axpyDot4 n=%d: gw[%d] = %g, want %g", n, i, got[i], want)
			}
		}
		for j, s := range []float64{s0, s1, s2, s3} {
			if !close(s, ws[j]) {
				t.Fatalf("axpyDot4 n=%d: s%d = %g, want %g", n, j, s, ws[j])
			}
		}
		if d := dot(w[:n], x[0]); !close(d, func() (s float64) {
			for i := range n {
				s += w[i] * x[0][i]
			}
			return
		}()) {
			t.Fatalf("dot n=%d wrong", n)
		}
	}
}

func TestOrderKeyOrdersLikeFloats(t *testing.T) {
	vs := []float64{math.Inf(-1), -math.MaxFloat64, -1e300, -2, -1, -0.5, -math.SmallestNonzeroFloat64,
		0, math.SmallestNonzeroFloat64, 1e-300, 0.5, 1, 2, 1e300, math.MaxFloat64, math.Inf(1)}
	for i := range vs {
		for j := range vs {
			if (vs[i] < vs[j]) != (orderKey(vs[i]) < orderKey(vs[j])) {
				t.Errorf("orderKey(%g) vs orderKey(%g) disagrees with <", vs[i], vs[j])
			}
		}
	}
	if orderKey(math.Copysign(0, -1)) >= orderKey(0) {
		t.Error("-0 should key just below +0")
	}
}
