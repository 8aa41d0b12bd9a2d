package accounting

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestShortcutsAgainstLiteralSums checks the speed-ups (truncating series
// once a rigorous tail bound is negligible; evaluating WBK19's base only at
// sparse orders beyond 64 and bounding it by chords in between) against the
// literal sums: the fast value must never be below the literal one, and must
// stay within 1e-9 (1e-3 for WBK19, whose chords are a deliberate
// over-approximation) of it.
func TestShortcutsAgainstLiteralSums(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	type params struct {
		n, k int64
		eps0 float64
	}
	cases := []params{{1e6, 1000, 2}, {60000, 10000, 1.5}, {60000, 2000, 2}, {1e9, 1e5, 3}, {100, 10, 1}, {1e6, 1e6, 1}}
	for range 6 {
		n := int64(math.Pow(10, 2+5*rng.Float64()))
		k := 1 + rng.Int64N(n)
		cases = append(cases, params{n, k, 0.1 + 4*rng.Float64()})
	}
	orders := []float64{2, 3, 9, 40, 65, 100, 203, 256, 700}
	names := []string{BoundNeurIPS21Upper, BoundCCS21WBK19, BoundCCS21Upper1}
	differ := 0 // the shortcuts must actually have been taken somewhere
	for _, c := range cases {
		for _, name := range names {
			mech := MechanismSubsampledShuffle
			if name == BoundCCS21Upper1 {
				mech = MechanismShuffle
				c.k = c.n
			}
			fast, err1 := NewBound(mech, name, c.n, c.k, c.eps0)
			exactForTesting = true
			slow, err2 := NewBound(mech, name, c.n, c.k, c.eps0)
			exactForTesting = false
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			for _, o := range orders {
				f, errF := fast.RDP(o)
				exactForTesting = true
				s, errS := slow.RDP(o)
				exactForTesting = false
				if (errF != nil) != (errS != nil) {
					t.Errorf("%s %+v order %g: fast err %v, literal err %v", name, c, o, errF, errS)
					continue
				}
				if errF != nil {
					continue
				}
				tol := 1e-9
				if name == BoundCCS21WBK19 {
					tol = 1e-3
				}
				if f != s {
					differ++
				}
				if f < s || f > s*(1+tol)+1e-300 {
					t.Errorf("%s %+v order %g: fast %.17g, literal %.17g", name, c, o, f, s)
				}
			}
		}
	}
	if differ == 0 {
		t.Error("no fast value differs from the literal sum: the shortcuts were never exercised")
	}
	t.Logf("%d values differ from the literal sums (all within tolerance, none below)", differ)
}
