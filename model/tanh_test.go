package model

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestTanhSliceMatchesMathTanh: tanhSlice equals math.Tanh bit for bit on
// both sides of 0.625, at the special values, on subnormals and on every
// tail length.
func TestTanhSliceMatchesMathTanh(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 62))
	special := []float64{0, math.Copysign(0, -1), 0.625, -0.625, math.Nextafter(0.625, 0), math.Nextafter(-0.625, 0),
		math.Nextafter(0.625, 1), 5e-324, -5e-324, 1e-300, 2.2250738585072014e-308, 44.01, -44.02, 1e300,
		math.Inf(1), math.Inf(-1), math.NaN(), math.Float64frombits(0xfff8000000000001), 1, -1, 0.3, -0.6}
	for n := 0; n <= 2000; n += 1 + n/8 {
		x := make([]float64, n)
		for i := range x {
			switch rng.IntN(4) {
			case 0:
				x[i] = special[rng.IntN(len(special))]
			case 1:
				x[i] = 0.625 * (2*rng.Float64() - 1)
			case 2:
				x[i] = 3 * rng.NormFloat64()
			default:
				x[i] = math.Ldexp(rng.Float64(), -rng.IntN(1074))
			}
		}
		got := append([]float64(nil), x...)
		tanhSlice(got, make([]uint8, n/4+1))
		for i, v := range x {
			want := math.Tanh(v)
			if math.Float64bits(got[i]) != math.Float64bits(want) && !(math.IsNaN(got[i]) && math.IsNaN(want)) {
				t.Fatalf("n=%d: tanhSlice(%v) = %v (%#x), math.Tanh %v (%#x)", n, v, got[i], math.Float64bits(got[i]), want, math.Float64bits(want))
			}
		}
	}
	t.Logf("useAVX2 = %v, noFMAFusion = %v", useAVX2, noFMAFusion)
}

func BenchmarkTanhSlice(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float64, 2704)
	for i := range x {
		x[i] = rng.NormFloat64() * 0.5
	}
	y := make([]float64, len(x))
	bad := make([]uint8, len(x)/4+1)
	b.Run("slice", func(b *testing.B) {
		for b.Loop() {
			copy(y, x)
			tanhSlice(y, bad)
		}
	})
	b.Run("math.Tanh", func(b *testing.B) {
		for b.Loop() {
			for i, v := range x {
				y[i] = math.Tanh(v)
			}
		}
	})
}

// TestMaxPoolRowMatchesGeneric: the dispatched max-pool row (AVX2 where
// available) equals the Go loop, values and argmax, on inputs drawn from a
// small set with ties, both zeros, infinities and NaNs of both signs, for
// every length and several channel counts.
func TestMaxPoolRowMatchesGeneric(t *testing.T) {
	rng := rand.New(rand.NewPCG(63, 64))
	vals := []float64{0, math.Copysign(0, -1), 1, -1, 0.5, -0.5, 5e-324, -5e-324, math.Inf(1), math.Inf(-1),
		math.NaN(), math.Float64frombits(0xfff8000000000000), 3.25, -2}
	for _, ch := range []int{1, 3, 4, 16} {
		for n := 0; n <= 37; n++ {
			rowStride := ch*(n/ch+2) + ch
			a := make([]float64, 2*rowStride+2*ch+n+8)
			for i := range a {
				a[i] = vals[rng.IntN(len(vals))]
			}
			base := rng.IntN(4)
			got, want := make([]float64, n), make([]float64, n)
			gotArg, wantArg := make([]int64, n), make([]int64, n)
			maxPoolRow(a, got, gotArg, base, ch, rowStride)
			maxPoolRowGeneric(a, want, wantArg, base, ch, rowStride)
			for e := range n {
				if math.Float64bits(got[e]) != math.Float64bits(want[e]) || gotArg[e] != wantArg[e] {
					t.Fatalf("ch=%d n=%d e=%d: %v at %d, generic %v at %d", ch, n, e, got[e], gotArg[e], want[e], wantArg[e])
				}
			}
		}
	}
}

// TestAxpy4ListsMatchGeneric: the register-blocked list kernels equal, bit
// for bit, the generic loops of axpy4 calls they replace.
func TestAxpy4ListsMatchGeneric(t *testing.T) {
	rng := rand.New(rand.NewPCG(65, 66))
	for _, n := range []int{8, 16, 32, 48} {
		for groups := 0; groups <= 9; groups++ {
			stride := n + rng.IntN(3)
			w := randVec(rng, (4*groups+4)*stride+n)
			in := randVec(rng, 4*groups)
			refs := make([]tapRef, 4*groups)
			for i := range refs {
				refs[i] = tapRef{in[i], int32(rng.IntN(len(w) - n + 1))}
			}
			dst := randVec(rng, n)
			got, want := append([]float64(nil), dst...), append([]float64(nil), dst...)
			axpy4Refs(got, w, refs)
			axpy4RefsGeneric(want, w, refs)
			for i := range got {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Fatalf("axpy4Refs n=%d groups=%d: [%d] = %v, generic %v", n, groups, i, got[i], want[i])
				}
			}
			got, want = append([]float64(nil), dst...), append([]float64(nil), dst...)
			axpy4Rows(got, in, w, stride)
			axpy4RowsGeneric(want, in, w, stride)
			for i := range got {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Fatalf("axpy4Rows n=%d groups=%d: [%d] = %v, generic %v", n, groups, i, got[i], want[i])
				}
			}
		}
	}
}

// TestMaxAbsBitsMatchesGeneric: the dispatched maxAbsBits equals the Go
// loop on every length, with NaNs, infinities and both zeros.
func TestMaxAbsBitsMatchesGeneric(t *testing.T) {
	rng := rand.New(rand.NewPCG(67, 68))
	vals := []float64{0, math.Copysign(0, -1), 1, -3, 5e-324, math.Inf(-1), math.Inf(1), math.NaN(),
		math.Float64frombits(0xfff8000000000001), -1e308, 0.25}
	for n := 0; n <= 70; n++ {
		for range 20 {
			v := make([]float64, n)
			for i := range v {
				if rng.IntN(3) == 0 {
					v[i] = vals[rng.IntN(len(vals))]
				} else {
					v[i] = rng.NormFloat64()
				}
			}
			if got, want := maxAbsBits(v), maxAbsBitsGeneric(v); got != want {
				t.Fatalf("n=%d: maxAbsBits %#x, generic %#x (%v)", n, got, want, v)
			}
		}
	}
}
