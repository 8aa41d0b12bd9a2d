package approxdp

import (
	"fmt"
	"math"
)

// maxEps0 is the largest local epsilon accepted. Beyond it e^eps0 is so
// large that shuffling cannot amplify anything representable in float64.
const maxEps0 = 700

func checkN(name string, n int64) error {
	if n < 1 {
		return fmt.Errorf("%s must be >= 1, got %d", name, n)
	}
	return nil
}

func checkEps0(eps0 float64) error {
	if math.IsNaN(eps0) || eps0 < 0 || eps0 > maxEps0 {
		return fmt.Errorf("eps0 must be finite and in [0, %d], got %g", maxEps0, eps0)
	}
	return nil
}

func checkEps(name string, eps float64) error {
	if math.IsNaN(eps) || math.IsInf(eps, 0) || eps < 0 {
		return fmt.Errorf("%s must be finite and >= 0, got %g", name, eps)
	}
	return nil
}

// checkOpenUnit checks 0 < v < 1.
func checkOpenUnit(name string, v float64) error {
	if math.IsNaN(v) || v <= 0 || v >= 1 {
		return fmt.Errorf("%s must be in (0,1), got %g", name, v)
	}
	return nil
}

// checkUnit checks 0 <= v <= 1.
func checkUnit(name string, v float64) error {
	if math.IsNaN(v) || v < 0 || v > 1 {
		return fmt.Errorf("%s must be in [0,1], got %g", name, v)
	}
	return nil
}

// roundUp returns the smallest float64 strictly above x scaled by (1+rel),
// used to make a computed upper bound safe against rounding.
func roundUp(x, rel float64) float64 {
	if x == 0 {
		return 0
	}
	return math.Nextafter(x*(1+rel), math.Inf(1))
}

// roundDown is the counterpart of roundUp for lower bounds.
func roundDown(x, rel float64) float64 {
	if x <= 0 {
		return 0
	}
	return math.Nextafter(x*(1-rel), 0)
}
