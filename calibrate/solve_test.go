package calibrate

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// Property: for random monotone epsilon curves the answer never exceeds the
// target, and is within the tolerance of the true root.
func TestSmallestFeasibleProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2)) // seeded: reproducible test
	for i := 0; i < 300; i++ {
		c := math.Exp(r.Float64()*8 - 4)
		p := 0.5 + 2*r.Float64()
		target := math.Exp(r.Float64()*6 - 3)
		eps := func(s float64) (float64, error) { return c / math.Pow(s, p), nil }
		root := math.Pow(c/target, 1/p)
		res, err := SmallestFeasible(eps, target, 1e-3, 1, 1e6, 1e-9)
		if err != nil {
			t.Fatal(err)
		}
		if res.Epsilon > target {
			t.Fatalf("eps %g > target %g", res.Epsilon, target)
		}
		if v, _ := eps(res.Value); v != res.Epsilon {
			t.Fatalf("reported epsilon %g, actual %g", res.Epsilon, v)
		}
		if root > 1e-3 && (res.Value < root*(1-1e-12) || res.Value > root*(1+2e-9)) {
			t.Fatalf("c=%g p=%g target=%g: %g, root %g", c, p, target, res.Value, root)
		}
		if res.Evaluations > 80 {
			t.Errorf("%d evaluations", res.Evaluations)
		}
	}
}

func TestLargestFeasibleProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4)) // seeded: reproducible test
	for i := 0; i < 300; i++ {
		c := math.Exp(r.Float64()*4 - 2)
		target := math.Exp(r.Float64()*4 - 2)
		// eps0 -> a convex increasing curve with a kink
		eps := func(x float64) (float64, error) { return c * (math.Expm1(x) + math.Max(0, x-1)), nil }
		res, err := LargestFeasible(eps, target, 1e-9, 1, 50, 1e-10)
		if err != nil {
			t.Fatal(err)
		}
		if res.Epsilon > target {
			t.Fatalf("eps %g > target %g", res.Epsilon, target)
		}
		above, _ := eps(res.Value * (1 + 1e-9))
		if above <= target && res.Value < 50 {
			t.Fatalf("not the largest: eps(%g (1+1e-9)) = %g <= %g", res.Value, above, target)
		}
	}
}

func TestLargestFeasibleIntProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6)) // seeded: reproducible test
	for i := 0; i < 300; i++ {
		rate := math.Exp(r.Float64()*10 - 8)
		target := math.Exp(r.Float64()*4 - 1)
		eps := func(steps int64) (float64, error) { return rate * math.Sqrt(float64(steps)), nil }
		res, err := LargestFeasibleInt(eps, target, 1, 1<<40)
		if err != nil {
			if errors.Is(err, ErrUnreachable) && rate > target {
				continue
			}
			t.Fatal(err)
		}
		if res.Epsilon > target {
			t.Fatalf("eps %g > target %g", res.Epsilon, target)
		}
		next, _ := eps(res.Value + 1)
		if next <= target && res.Value < 1<<40 {
			t.Fatalf("steps %d not maximal", res.Value)
		}
	}
}

// A non-monotone (noisy) curve: the answer is still feasible.
func TestNonMonotoneStillFeasible(t *testing.T) {
	eps := func(s float64) (float64, error) { return 1/s + 0.05*math.Sin(40*s), nil }
	res, err := SmallestFeasible(eps, 0.5, 0.1, 1, 100, 1e-8)
	if err != nil {
		t.Fatal(err)
	}
	if res.Epsilon > 0.5 {
		t.Fatalf("eps %g > 0.5", res.Epsilon)
	}
}

func TestErrors(t *testing.T) {
	one := func(float64) (float64, error) { return 1, nil }
	if _, err := SmallestFeasible(one, 0.5, 1, 2, 8, 1e-6); !errors.Is(err, ErrUnreachable) {
		t.Errorf("want ErrUnreachable, got %v", err)
	}
	if _, err := SmallestFeasible(one, -1, 1, 2, 8, 1e-6); err == nil {
		t.Error("negative target accepted")
	}
	if _, err := SmallestFeasible(one, 2, 0, 2, 8, 1e-6); err == nil {
		t.Error("lo = 0 accepted")
	}
	if _, err := LargestFeasible(one, 0.5, 1, 1, 2, 1e-6); !errors.Is(err, ErrUnreachable) {
		t.Errorf("want ErrUnreachable, got %v", err)
	}
	if _, err := LargestFeasibleInt(func(int64) (float64, error) { return 1, nil }, 0.5, 1, 10); !errors.Is(err, ErrUnreachable) {
		t.Errorf("want ErrUnreachable, got %v", err)
	}
	nan := func(float64) (float64, error) { return math.NaN(), nil }
	if _, err := SmallestFeasible(nan, 1, 1, 2, 8, 1e-6); err == nil {
		t.Error("NaN accepted")
	}
}

func FuzzSmallestFeasible(f *testing.F) {
	f.Add(1.0, 2.0, 0.3)
	f.Add(1e-3, 0.5, 1e3)
	f.Fuzz(func(t *testing.T, c, p, target float64) {
		if !(c > 0 && c < 1e100) || !(p > 0.01 && p < 10) {
			return
		}
		eps := func(s float64) (float64, error) { return c / math.Pow(s, p), nil }
		res, err := SmallestFeasible(eps, target, 1e-6, 1, 1e12, 1e-6)
		if err != nil {
			return
		}
		if !(res.Epsilon <= target) {
			t.Fatalf("eps %g > target %g", res.Epsilon, target)
		}
	})
}
