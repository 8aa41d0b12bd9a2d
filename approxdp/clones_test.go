package approxdp

import (
	"math"
	"strings"
	"testing"
)

// Reference triples of spec §7: the interval printed by
// apple/ml-shuffling-amplification (block size 100, 20 bisection steps) must
// contain our much tighter interval.
func TestNumericalEpsilonMatchesReferenceImplementation(t *testing.T) {
	cases := []struct {
		n                    int64
		eps0, delta          float64
		closed, lower, upper float64
	}{
		{100000, 4, 1e-6, 0.5378040242, 0.1675385583, 0.1727905508},
		{10000, 1, 1e-6, 0.2332656, 0.0526312, 0.0534049},
		{100000, 2, 1e-6, 0.1905797, 0.0449376, 0.0452126},
		{1000000, 4, 1e-8, 0.2271309, 0.0641067, 0.0650964},
	}
	for _, c := range cases {
		iv, err := NumericalEpsilon(c.n, c.eps0, c.delta)
		if err != nil {
			t.Fatal(err)
		}
		if iv.Lower < c.lower || iv.Upper > c.upper || iv.Lower > iv.Upper {
			t.Errorf("n=%d eps0=%g delta=%g: [%.10f, %.10f] not inside reference [%.10f, %.10f]",
				c.n, c.eps0, c.delta, iv.Lower, iv.Upper, c.lower, c.upper)
		}
		if iv.Upper-iv.Lower > 1e-7*iv.Upper {
			t.Errorf("n=%d: interval [%g, %g] wider than 1e-7 relative", c.n, iv.Lower, iv.Upper)
		}
		cf, valid, err := ClosedFormEpsilon(c.n, c.eps0, c.delta)
		if err != nil || !valid || math.Abs(cf-c.closed) > 1e-7 {
			t.Errorf("closed form n=%d: %v %v %v, want %g", c.n, cf, valid, err, c.closed)
		}
		// The certificate: delta at Upper really is <= delta.
		d, err := NumericalDelta(c.n, c.eps0, iv.Upper)
		if err != nil || d.Upper > c.delta {
			t.Errorf("n=%d: NumericalDelta at Upper = %+v > %g", c.n, d, c.delta)
		}
	}
}

// At n = 1e9 nothing overflows and the bound is far below the closed form.
func TestNumericalDeltaHugeN(t *testing.T) {
	const n, eps0 = int64(1e9), 3.0
	cf, valid, err := ClosedFormEpsilon(n, eps0, 1e-10)
	if err != nil || !valid {
		t.Fatal(cf, valid, err)
	}
	iv, err := NumericalDelta(n, eps0, cf)
	if err != nil {
		t.Fatal(err)
	}
	if !(iv.Upper <= 1e-10) || iv.Lower < 0 || math.IsNaN(iv.Upper) || iv.Lower > iv.Upper {
		t.Errorf("delta at the closed form's eps = %+v, want <= 1e-10", iv)
	}
}

func TestNumericalProperties(t *testing.T) {
	// Monotone in n and in delta, never above eps0, never above the closed form.
	for _, eps0 := range []float64{0.5, 2, 5} {
		prev := math.Inf(1)
		for _, n := range []int64{1, 10, 100, 1000, 10000} {
			iv, err := NumericalEpsilon(n, eps0, 1e-6)
			if err != nil {
				t.Fatal(err)
			}
			if iv.Upper > prev*(1+1e-9) {
				t.Errorf("eps0=%g: eps increased with n at n=%d: %g > %g", eps0, n, iv.Upper, prev)
			}
			if iv.Upper > eps0 || iv.Lower < 0 || iv.Lower > iv.Upper {
				t.Errorf("eps0=%g n=%d: bad interval %+v", eps0, n, iv)
			}
			if cf, valid, _ := ClosedFormEpsilon(n, eps0, 1e-6); valid && iv.Upper > cf {
				t.Errorf("eps0=%g n=%d: numerical %g above closed form %g", eps0, n, iv.Upper, cf)
			}
			prev = iv.Upper
		}
		prev = math.Inf(1)
		for _, d := range []float64{1e-12, 1e-8, 1e-4, 0.1} {
			e, err := NumericalEpsilonUpper(2000, eps0, d)
			if err != nil {
				t.Fatal(err)
			}
			if e > prev*(1+1e-9) {
				t.Errorf("eps0=%g: eps increased with delta at %g", eps0, d)
			}
			prev = e
		}
	}
	// n = 1: no clones can hide the report, delta(eps) = (e^eps0-e^eps)/(e^eps0+1).
	iv, err := NumericalDelta(1, 1, 0.3)
	if err != nil {
		t.Fatal(err)
	}
	want := (math.E - math.Exp(0.3)) / (math.E + 1)
	if iv.Lower > want*(1+1e-12) || iv.Upper < want || iv.Upper > want*(1+1e-9) {
		t.Errorf("n=1: %+v, want %g", iv, want)
	}
	// Delta is non-increasing in eps and 0 at eps0.
	prevD := 2.0
	for _, e := range []float64{0, 0.01, 0.1, 0.5, 1, 1.9, 2} {
		d, err := NumericalDelta(500, 2, e)
		if err != nil {
			t.Fatal(err)
		}
		if d.Upper > prevD*(1+1e-12) {
			t.Errorf("delta increased with eps at %g", e)
		}
		prevD = d.Upper
	}
	if prevD != 0 {
		t.Errorf("delta at eps0 = %g, want 0", prevD)
	}
}

func TestInputValidation(t *testing.T) {
	checks := []struct {
		name string
		err  error
	}{}
	add := func(name string, err error) {
		checks = append(checks, struct {
			name string
			err  error
		}{name, err})
	}
	_, _, err := ClosedFormEpsilon(0, 1, 1e-6)
	add("n", err)
	_, _, err = ClosedFormEpsilon(10, -1, 1e-6)
	add("eps0", err)
	_, _, err = ClosedFormEpsilon(10, math.NaN(), 1e-6)
	add("eps0", err)
	_, _, err = ClosedFormEpsilon(10, 1, 1)
	add("delta", err)
	_, err = NumericalEpsilon(10, 1, 0)
	add("delta", err)
	_, err = NumericalEpsilon(10, math.Inf(1), 0.1)
	add("eps0", err)
	_, err = NumericalDelta(10, 1, -0.1)
	add("eps", err)
	_, _, err = UllmanSubsample(1, 0.1, 0)
	add("gamma", err)
	_, _, err = UllmanSubsample(1, 1.5, 0.5)
	add("delta", err)
	_, err = KOV15Epsilon(0.1, -1, 0.5)
	add("steps", err)
	_, err = KOV15Epsilon(0.1, 10, 0)
	add("delta-tilde", err)
	_, err = SubsampledShuffle(100, 101, 1, 10, 1e-6, ShuffleBest)
	add("k", err)
	_, err = SubsampledShuffle(100, 10, 1, -1, 1e-6, ShuffleBest)
	add("steps", err)
	_, err = SubsampledShuffle(100, 10, 1, 1, 0, ShuffleBest)
	add("delta", err)
	_, err = NewShuffleCurve(10, 1, ShuffleMethod(9))
	add("shuffle method", err)
	for _, c := range checks {
		if c.err == nil || !strings.Contains(c.err.Error(), c.name) {
			t.Errorf("want an error naming %q, got %v", c.name, c.err)
		}
	}
}

// Bracket hints only speed the search up: wrong hints give the same,
// certified answer.
func TestNumericalEpsilonHints(t *testing.T) {
	const n, eps0, delta = int64(3000), 2.0, 1e-7
	ref, err := NumericalEpsilonUpper(n, eps0, delta)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range [][2]float64{{0, math.Inf(1)}, {ref * 0.9, ref * 1.1}, {ref * 1.5, ref * 2}, {ref * 0.1, ref * 0.5},
		{math.NaN(), math.NaN()}, {-1, -1}, {ref, ref}, {10, 0.001}} {
		iv, err := numericalEpsilonHinted(n, eps0, delta, false, h[0], h[1])
		if err != nil {
			t.Fatal(err)
		}
		d, _ := NumericalDelta(n, eps0, iv.Upper)
		if math.Abs(iv.Upper-ref) > 2e-9*ref || d.Upper > delta {
			t.Errorf("hints %v: upper %.12g (reference %.12g), delta there %g", h, iv.Upper, ref, d.Upper)
		}
	}
}
