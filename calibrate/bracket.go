package calibrate

import (
	"fmt"
	"math"
)

// BracketDecreasing returns lo < hi = 2 lo (clamped to [min, max]) with
// eps(lo) > target >= eps(hi), for eps non-increasing in x, by halving or
// doubling from x0; lo = hi = min when min itself meets the target. It
// returns the number of evaluations. SmallestFeasible started from such a
// factor-2 bracket needs far fewer steps than from the whole range when
// epsilon spans many decades over it (the noise multiplier sigma); memoised
// epsilon functions make its re-evaluation of lo and hi cheap.
func BracketDecreasing(eps EpsilonFunc, target, x0, min, max float64) (lo, hi float64, evaluations int, err error) {
	if err := checkTarget(target); err != nil {
		return 0, 0, 0, err
	}
	if !(min > 0 && min <= x0 && x0 <= max) {
		return 0, 0, 0, fmt.Errorf("invalid range: need 0 < min <= x0 <= max, got min=%g x0=%g max=%g", min, x0, max)
	}
	n := 0
	ev := func(x float64) (float64, error) {
		n++
		v, err := eps(x)
		if err == nil && math.IsNaN(v) {
			err = fmt.Errorf("epsilon is NaN at %g", x)
		}
		return v, err
	}
	e0, err := ev(x0)
	if err != nil {
		return 0, 0, n, err
	}
	if e0 <= target {
		hi = x0
		for hi > min {
			x := math.Max(hi/2, min)
			e, err := ev(x)
			if err != nil {
				return 0, 0, n, err
			}
			if e > target {
				return x, hi, n, nil
			}
			hi = x
		}
		return min, min, n, nil
	}
	lo, e := x0, e0
	for lo < max {
		x := math.Min(2*lo, max)
		if e, err = ev(x); err != nil {
			return 0, 0, n, err
		}
		if e <= target {
			return lo, x, n, nil
		}
		lo = x
	}
	return 0, 0, n, fmt.Errorf("%w: epsilon %g > %g even at the largest value %g", ErrUnreachable, e, target, max)
}
