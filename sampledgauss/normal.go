package sampledgauss

import (
	"math"

	"github.com/shuffledp/shuffledp/internal/logmath"
)

// logNormCDF returns log Phi(x), Phi the standard normal CDF, for every
// real x: log1p(-erfc(x/sqrt 2)/2) for x >= 0 (Phi >= 1/2), and
// -x^2/2 + log(erfcx(-x/sqrt 2)/2) for x < 0, where erfc would underflow.
// The relative error of the result's exponential is a few ulps times
// (1 + x^2/2), as reported by logNormCDFMag.
func logNormCDF(x float64) float64 {
	if x >= 0 {
		return math.Log1p(-0.5 * math.Erfc(x/math.Sqrt2))
	}
	w := -x / math.Sqrt2
	return -w*w + logHalfErfcx(w)
}

// logNormCDFMag is the size of the components of logNormCDF(x), for the
// error bound.
func logNormCDFMag(x float64) float64 {
	if x >= 0 {
		return 1
	}
	return 1 + x*x/2 + math.Abs(logHalfErfcx(-x/math.Sqrt2))
}

// logHalfErfcx returns log(erfcx(w)/2) = log(e^{w^2} erfc(w)/2) for w >= 0.
// Below 4 it multiplies math.Erfc by e^{w^2} (relative error a few ulps
// times w^2 <= 16); from 4 on it evaluates the Laplace continued fraction
// erfcx(w) = (1/sqrt pi) 1/(w + (1/2)/(w + 1/(w + (3/2)/(w + ...)))) at
// depth 24, whose truncation error is below 1e-17 relative there (checked
// against mpmath in normal_test.go).
func logHalfErfcx(w float64) float64 {
	if w < 4 {
		return logmath.Log(0.5 * math.Exp(w*w) * math.Erfc(w))
	}
	f := w
	for j := 24; j >= 1; j-- {
		f = w + float64(j)/2/f
	}
	return -logmath.Log(2*f) - 0.5*logmath.Log(math.Pi)
}
