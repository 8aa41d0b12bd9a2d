package calibrate

import (
	"errors"
	"fmt"
	"math"
)

// EpsilonFunc returns the epsilon spent at parameter value x.
type EpsilonFunc func(x float64) (float64, error)

// Result is a calibrated parameter.
type Result struct {
	// Value is the calibrated parameter.
	Value float64
	// Epsilon is the epsilon evaluated at Value; it is <= the target.
	Epsilon float64
	// Evaluations counts the calls of the epsilon function.
	Evaluations int
}

// ErrUnreachable is returned (wrapped) when no parameter in the allowed
// range meets the target.
var ErrUnreachable = errors.New("target epsilon unreachable")

const maxEvaluations = 200

func checkTarget(target float64) error {
	if !(target > 0) || math.IsInf(target, 0) {
		return fmt.Errorf("target epsilon must be positive and finite, got %g", target)
	}
	return nil
}

type counter struct {
	f EpsilonFunc
	n int
}

func (c *counter) eval(x float64) (float64, error) {
	c.n++
	if c.n > maxEvaluations {
		return 0, fmt.Errorf("calibration did not converge in %d evaluations", maxEvaluations)
	}
	v, err := c.f(x)
	if err != nil {
		return 0, err
	}
	if math.IsNaN(v) {
		return 0, fmt.Errorf("epsilon is NaN at %g", x)
	}
	return v, nil
}

// SmallestFeasible returns the smallest x in [lo, max] with eps(x) <=
// target, to relative tolerance relTol, for eps non-increasing in x. The
// search starts from the bracket [lo, hi] and doubles hi (up to max) until
// hi is feasible. lo must be > 0.
func SmallestFeasible(eps EpsilonFunc, target, lo, hi, max, relTol float64) (Result, error) {
	if err := checkTarget(target); err != nil {
		return Result{}, err
	}
	if !(lo > 0 && lo <= hi && hi <= max) || !(relTol > 0 && relTol < 1) {
		return Result{}, fmt.Errorf("invalid bracket: need 0 < lo <= hi <= max and relTol in (0,1), got lo=%g hi=%g max=%g relTol=%g", lo, hi, max, relTol)
	}
	c := &counter{f: eps}
	flo, err := c.eval(lo)
	if err != nil {
		return Result{}, err
	}
	if flo <= target {
		return Result{Value: lo, Epsilon: flo, Evaluations: c.n}, nil
	}
	fhi, err := c.eval(hi)
	if err != nil {
		return Result{}, err
	}
	for fhi > target {
		if hi >= max {
			return Result{}, fmt.Errorf("%w: epsilon %g > %g even at the largest value %g", ErrUnreachable, fhi, target, max)
		}
		lo, flo = hi, fhi
		hi = math.Min(2*hi, max)
		if fhi, err = c.eval(hi); err != nil {
			return Result{}, err
		}
	}
	// Invariant: eps(lo) > target >= eps(hi).
	x, fx, err := illinois(c, target, lo, flo, hi, fhi, relTol, false)
	if err != nil {
		return Result{}, err
	}
	return Result{Value: x, Epsilon: fx, Evaluations: c.n}, nil
}

// LargestFeasible returns the largest x in [min, hi] with eps(x) <= target,
// to relative tolerance relTol, for eps non-decreasing in x: it halves lo
// (down to min) until lo is feasible. min must be > 0.
func LargestFeasible(eps EpsilonFunc, target, min, lo, hi, relTol float64) (Result, error) {
	if err := checkTarget(target); err != nil {
		return Result{}, err
	}
	if !(min > 0 && min <= lo && lo <= hi) || !(relTol > 0 && relTol < 1) {
		return Result{}, fmt.Errorf("invalid bracket: need 0 < min <= lo <= hi and relTol in (0,1), got min=%g lo=%g hi=%g relTol=%g", min, lo, hi, relTol)
	}
	c := &counter{f: eps}
	fhi, err := c.eval(hi)
	if err != nil {
		return Result{}, err
	}
	if fhi <= target {
		return Result{Value: hi, Epsilon: fhi, Evaluations: c.n}, nil
	}
	flo, err := c.eval(lo)
	if err != nil {
		return Result{}, err
	}
	for flo > target {
		if lo <= min {
			return Result{}, fmt.Errorf("%w: epsilon %g > %g even at the smallest value %g", ErrUnreachable, flo, target, min)
		}
		hi, fhi = lo, flo
		lo = math.Max(lo/2, min)
		if flo, err = c.eval(lo); err != nil {
			return Result{}, err
		}
	}
	// Invariant: eps(lo) <= target < eps(hi).
	x, fx, err := illinois(c, target, lo, flo, hi, fhi, relTol, true)
	if err != nil {
		return Result{}, err
	}
	return Result{Value: x, Epsilon: fx, Evaluations: c.n}, nil
}

// illinois shrinks a bracket [a, b] of g(x) = eps(x) - target with one end
// feasible (g <= 0) and returns the feasible end once the bracket is
// narrower than relTol times its feasible end. feasibleLow says which end
// is feasible.
func illinois(c *counter, target, a, fa, b, fb, relTol float64, feasibleLow bool) (float64, float64, error) {
	ga, gb := fa-target, fb-target
	side := 0
	for {
		feas, ffeas := b, fb
		if feasibleLow {
			feas, ffeas = a, fa
		}
		if b-a <= relTol*math.Abs(feas) {
			return feas, ffeas, nil
		}
		x := b - gb*(b-a)/(gb-ga)
		// Keep well inside the bracket; fall back to bisection if not.
		if !(x > a+(b-a)/64 && x < b-(b-a)/64) || math.IsInf(ga, 0) || math.IsInf(gb, 0) {
			x = a + (b-a)/2
		}
		fx, err := c.eval(x)
		if err != nil {
			return 0, 0, err
		}
		gx := fx - target
		// Which side of the root is x on? Feasible points go to the
		// feasible end.
		if (gx <= 0) == feasibleLow {
			a, fa, ga = x, fx, gx
			if side == -1 {
				gb /= 2
			}
			side = -1
		} else {
			b, fb, gb = x, fx, gx
			if side == 1 {
				ga /= 2
			}
			side = 1
		}
	}
}

// IntEpsilonFunc returns the epsilon spent at integer parameter x.
type IntEpsilonFunc func(x int64) (float64, error)

// IntResult is a calibrated integer parameter.
type IntResult struct {
	Value       int64
	Epsilon     float64
	Evaluations int
}

// LargestFeasibleInt returns the largest integer x in [lo, hi] with eps(x)
// <= target, for eps non-decreasing in x, by exponential search from lo
// followed by bisection on integers (exact: x+1 is infeasible or > hi).
func LargestFeasibleInt(eps IntEpsilonFunc, target float64, lo, hi int64) (IntResult, error) {
	return LargestFeasibleIntFrom(eps, target, lo, hi, 1)
}

// LargestFeasibleIntFrom is LargestFeasibleInt with the exponential search
// starting at lo + step (step >= 1), then lo + 3 step, lo + 7 step, ...:
// from a known feasible lo near the answer (the value a cheaper,
// conservative bound allows), a step of a fraction of lo finds an
// infeasible end in a few evaluations where step 1 would need about
// log2(lo) of them. The answer is exact whatever the step.
func LargestFeasibleIntFrom(eps IntEpsilonFunc, target float64, lo, hi, step int64) (IntResult, error) {
	if step < 1 {
		return IntResult{}, fmt.Errorf("invalid step %d: need >= 1", step)
	}
	if err := checkTarget(target); err != nil {
		return IntResult{}, err
	}
	if lo > hi {
		return IntResult{}, fmt.Errorf("invalid range: lo=%d > hi=%d", lo, hi)
	}
	n := 0
	ev := func(x int64) (float64, error) {
		n++
		if n > maxEvaluations {
			return 0, fmt.Errorf("calibration did not converge in %d evaluations", maxEvaluations)
		}
		v, err := eps(x)
		if err == nil && math.IsNaN(v) {
			err = fmt.Errorf("epsilon is NaN at %d", x)
		}
		return v, err
	}
	flo, err := ev(lo)
	if err != nil {
		return IntResult{}, err
	}
	if flo > target {
		return IntResult{}, fmt.Errorf("%w: epsilon %g > %g already at the smallest value %d", ErrUnreachable, flo, target, lo)
	}
	// Exponential search for an infeasible upper end.
	good, fgood := lo, flo
	bad := int64(-1)
	for bad < 0 {
		x := good + step
		if x > hi || x < good { // past the range (or overflow)
			x = hi
		}
		if x == good {
			return IntResult{Value: good, Epsilon: fgood, Evaluations: n}, nil
		}
		fx, err := ev(x)
		if err != nil {
			return IntResult{}, err
		}
		if fx <= target {
			good, fgood = x, fx
			if x == hi {
				return IntResult{Value: good, Epsilon: fgood, Evaluations: n}, nil
			}
			step *= 2
		} else {
			bad = x
		}
	}
	for bad-good > 1 {
		x := good + (bad-good)/2
		fx, err := ev(x)
		if err != nil {
			return IntResult{}, err
		}
		if fx <= target {
			good, fgood = x, fx
		} else {
			bad = x
		}
	}
	return IntResult{Value: good, Epsilon: fgood, Evaluations: n}, nil
}
