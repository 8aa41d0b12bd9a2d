//go:build !purego

package model

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestTanhAVX2Branches: on a fine sweep of (0.6, 44.1) and random values
// of both signs, tanhAVX2 itself (no fallback) computes every lane with
// 0 < |x| <= MAXLOG/2 and equals math.Tanh bit for bit there, including
// where 2|x|·log2(e) is near a half-integer (the rounding of k).
func TestTanhAVX2Branches(t *testing.T) {
	if !useAVX2 || !noFMAFusion {
		t.Skip("no AVX2/FMA kernels in this build")
	}
	rng := rand.New(rand.NewPCG(69, 70))
	const n = 1 << 18
	x := make([]float64, n)
	for i := range x {
		switch i % 3 {
		case 0:
			x[i] = 0.6 + 43.5*float64(i)/n
		case 1: // near k + 1/2 = 2|x|·log2(e)
			k := 2 + rng.IntN(125)
			x[i] = (float64(k) + 0.5) / (2 * math.Log2E) * (1 + 1e-15*rng.NormFloat64())
		default:
			x[i] = math.Ldexp(rng.Float64(), -rng.IntN(60)) * 40
		}
		if rng.IntN(2) == 0 {
			x[i] = -x[i]
		}
	}
	got := append([]float64(nil), x...)
	bad := make([]uint8, n/4)
	tanhAVX2(got, bad, &tanhConsts)
	const halfMaxLog = 0.5 * 8.8029691931113054295988e+01
	for i, v := range x {
		inRange := v != 0 && math.Abs(v) <= halfMaxLog
		if bad[i/4]&(1<<(i%4)) != 0 {
			if inRange {
				t.Fatalf("x = %v: left to the fallback", v)
			}
			continue
		}
		if want := math.Tanh(v); math.Float64bits(got[i]) != math.Float64bits(want) {
			t.Fatalf("tanhAVX2(%v) = %v (%#x), math.Tanh %v (%#x)", v, got[i], math.Float64bits(got[i]), want, math.Float64bits(want))
		}
	}
}
