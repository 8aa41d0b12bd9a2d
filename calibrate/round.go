package calibrate

import (
	"math"
	"strconv"
)

// RoundSafe rounds a calibrated x > 0 to the given number of significant
// decimal digits in the safe direction, up when a larger x spends less
// (sigma: up = true) and down otherwise (eps0, rate), so that the printed
// value is itself an answer: it returns the rounded value only if eps
// there is <= target, and x otherwise (a non-monotone bound, or an error).
func RoundSafe(x float64, digits int, up bool, target float64, eps EpsilonFunc) float64 {
	if !(x > 0) || math.IsInf(x, 0) || digits < 1 {
		return x
	}
	r, err := strconv.ParseFloat(strconv.FormatFloat(x, 'e', digits-1, 64), 64)
	if err != nil {
		return x
	}
	if up && r < x || !up && r > x {
		exp := math.Floor(math.Log10(math.Abs(x)))
		unit := math.Pow(10, exp-float64(digits-1))
		if up {
			r += unit
		} else {
			r -= unit
		}
		if r, err = strconv.ParseFloat(strconv.FormatFloat(r, 'e', digits-1, 64), 64); err != nil {
			return x
		}
	}
	if up && r < x || !up && r > x || r <= 0 {
		return x
	}
	if e, err := eps(r); err != nil || e > target {
		return x
	}
	return r
}
