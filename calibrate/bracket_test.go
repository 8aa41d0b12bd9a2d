package calibrate

import (
	"errors"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// Property: for random decreasing epsilon curves the bracket holds the
// root: eps(lo) > target >= eps(hi), hi = min(2 lo, max), within [min, max].
func TestBracketDecreasingProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6)) // seeded: reproducible test
	const min, max = 0.01, 1e4
	for i := 0; i < 500; i++ {
		c := math.Exp(r.Float64()*30 - 15)
		target := math.Exp(r.Float64()*10 - 5)
		eps := func(s float64) (float64, error) { return c / (s * s), nil }
		root := math.Sqrt(c / target)
		lo, hi, n, err := BracketDecreasing(eps, target, 1, min, max)
		switch {
		case root > max:
			if !errors.Is(err, ErrUnreachable) {
				t.Fatalf("root %g beyond max: %g %g %v", root, lo, hi, err)
			}
			continue
		case err != nil:
			t.Fatalf("root %g: %v", root, err)
		case root <= min:
			if lo != min || hi != min {
				t.Fatalf("root %g below min: [%g, %g]", root, lo, hi)
			}
			continue
		}
		elo, _ := eps(lo)
		ehi, _ := eps(hi)
		if !(elo > target && ehi <= target && lo < hi && hi <= math.Min(2*lo, max) && lo >= min) {
			t.Fatalf("root %g: bracket [%g, %g], eps %g %g, target %g", root, lo, hi, elo, ehi, target)
		}
		if want := 2 + int(math.Abs(math.Log2(root))); n > want {
			t.Errorf("root %g: %d evaluations, want <= %d", root, n, want)
		}
	}
}

func TestBracketDecreasingErrors(t *testing.T) {
	ok := func(x float64) (float64, error) { return 1 / x, nil }
	fail := errors.New("boom")
	for _, c := range []struct {
		eps                EpsilonFunc
		target, x0, lo, hi float64
		want               error
	}{
		{ok, 0, 1, 0.1, 10, nil},
		{ok, math.Inf(1), 1, 0.1, 10, nil},
		{ok, 1, 1, 0, 10, nil},
		{ok, 1, 20, 0.1, 10, nil},
		{func(float64) (float64, error) { return 0, fail }, 1, 1, 0.1, 10, fail},
		{func(float64) (float64, error) { return math.NaN(), nil }, 1, 1, 0.1, 10, nil},
		{ok, 1e-9, 1, 0.1, 10, ErrUnreachable},
	} {
		_, _, _, err := BracketDecreasing(c.eps, c.target, c.x0, c.lo, c.hi)
		if err == nil || c.want != nil && !errors.Is(err, c.want) {
			t.Errorf("target %g x0 %g [%g, %g]: %v, want %v", c.target, c.x0, c.lo, c.hi, err, c.want)
		}
	}
}

// Property: RoundSafe returns x or a value of the requested digits on the
// safe side of x, where eps meets the target.
func TestRoundSafeProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8)) // seeded: reproducible test
	for i := 0; i < 2000; i++ {
		x := math.Exp(r.Float64()*40 - 20)
		up := r.IntN(2) == 0
		digits := 1 + r.IntN(9)
		// eps decreasing in x when up (sigma), increasing otherwise (eps0);
		// target exactly met at x.
		eps := func(y float64) (float64, error) {
			if up {
				return 1 / y, nil
			}
			return y, nil
		}
		target, _ := eps(x)
		got := RoundSafe(x, digits, up, target, eps)
		if e, _ := eps(got); e > target {
			t.Fatalf("x=%g up=%v digits=%d: %g spends %g > %g", x, up, digits, got, e, target)
		}
		if up && got < x || !up && got > x {
			t.Fatalf("x=%g up=%v: %g on the unsafe side", x, up, got)
		}
		if got != x {
			if mustParse(t, strconv.FormatFloat(got, 'e', digits-1, 64)) != got {
				t.Fatalf("x=%g digits=%d: %g has more digits", x, digits, got)
			}
			if math.Abs(got-x) > math.Abs(x)*math.Pow(10, 1-float64(digits)) {
				t.Fatalf("x=%g digits=%d: %g too far", x, digits, got)
			}
		}
	}
	// A bound that is not monotone: the rounded value fails, x is kept.
	spike := func(y float64) (float64, error) {
		if y != 1.2345678 {
			return 2, nil
		}
		return 0, nil
	}
	if got := RoundSafe(1.2345678, 3, true, 1, spike); got != 1.2345678 {
		t.Errorf("non-monotone: %g", got)
	}
	if got := RoundSafe(1.25, 2, false, 1, func(float64) (float64, error) { return 0, errors.New("x") }); got != 1.25 {
		t.Errorf("error: %g", got)
	}
	if got := RoundSafe(1.24999, 2, true, 1, func(float64) (float64, error) { return 0, nil }); got != 1.3 {
		t.Errorf("1.24999 up to 2 digits: %g, want 1.3", got)
	}
	if got := RoundSafe(1.25001, 2, false, 1, func(float64) (float64, error) { return 0, nil }); got != 1.2 {
		t.Errorf("1.25001 down to 2 digits: %g, want 1.2", got)
	}
}

func mustParse(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
