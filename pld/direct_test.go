package pld

import (
	"math/rand/v2"
	"testing"
)

// TestConvolveDirectBlocked: the four-row loop rounds every entry exactly
// as the one-row loop does (the same products added in the same order),
// zero rows and short operands included.
func TestConvolveDirectBlocked(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range [][2]int{{1, 1}, {3, 5}, {4, 4}, {7, 3}, {9, 4}, {50, 17}, {101, 64}} {
		a, b := make([]float64, n[0]), make([]float64, n[1])
		for i := range a {
			if rng.IntN(4) > 0 {
				a[i] = rng.Float64()
			}
		}
		for j := range b {
			b[j] = rng.Float64() * 1e-3
		}
		got, _, _ := convolveDirect(a, b)
		want := make([]float64, len(a)+len(b)-1)
		for i, x := range a {
			if x == 0 {
				continue
			}
			for j, y := range b {
				want[i+j] += x * y
			}
		}
		for k := range want {
			if got[k] != want[k] {
				t.Fatalf("%v: entry %d is %v, the one-row loop gives %v", n, k, got[k], want[k])
			}
		}
	}
}
