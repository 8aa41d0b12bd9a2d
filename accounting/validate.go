package accounting

import (
	"fmt"
	"math"

	"github.com/shuffledp/shuffledp/internal/logmath"
)

// validateShuffle checks the parameters shared by the shuffle-model bounds:
// n >= 1 clients, 1 <= k <= n sampled per round, eps0 >= 0 finite.
func validateShuffle(n, k int64, eps0 float64) error {
	if n < 1 {
		return fmt.Errorf("n must be >= 1, got %d", n)
	}
	if k < 1 || k > n {
		return fmt.Errorf("k must satisfy 1 <= k <= n (n=%d), got %d", n, k)
	}
	if math.IsNaN(eps0) || math.IsInf(eps0, 0) || eps0 < 0 {
		return fmt.Errorf("eps0 must be a finite number >= 0, got %g", eps0)
	}
	return nil
}

// logExpm1 returns log(e^x - 1) for x > 0 without overflow or cancellation.
func logExpm1(x float64) float64 {
	if x > 36 {
		return x + math.Log1p(-math.Exp(-x))
	}
	return logmath.Log(math.Expm1(x))
}

// logBinomTable holds log k! for k = 0..len-1 so that integer binomials
// C(lambda, j) = exp(lf[lambda] - lf[j] - lf[lambda-j]) cost three lookups.
// For lambda <= 1e5 the cancellation error is below 1e-10 in the log.
type logFactTable []float64

func newLogFact(n int) logFactTable {
	t := make(logFactTable, n+1)
	for i := 2; i <= n; i++ {
		t[i] = t[i-1] + logmath.Log(float64(i))
	}
	// Re-anchor with Lgamma every 64 entries to stop the running sum from
	// accumulating rounding error.
	for i := 64; i <= n; i += 64 {
		v, _ := math.Lgamma(float64(i) + 1)
		t[i] = v
		for j := i + 1; j < i+64 && j <= n; j++ {
			t[j] = t[j-1] + logmath.Log(float64(j))
		}
	}
	return t
}

func (t logFactTable) binom(n, k int) float64 { return t[n] - t[k] - t[n-k] }

// rdpFromLogSum returns log(1 + e^logS)/(order-1) for an upper bound whose
// log-sum logS was accumulated in float64, rounded up: logS is first raised
// by logSumSlack(order), which covers the rounding of its terms (each a sum
// of log-binomials from the log-factorial table, of magnitude up to
// 3 log(order!), and of per-order coefficients of magnitude up to ~32 order),
// then the result is nudged up a few ulps.
func rdpFromLogSum(logS, order float64) float64 {
	v := logmathLog1pExp(logS+logSumSlack(order)) / (order - 1)
	return conservative(v)
}

// logSumSlack is an absolute bound on the float64 rounding error of a
// log-sum of the moment bounds at integer order lam: 64 ulps relative to
// 3 log(lam!) + 32 lam (generous; the errors observed against the 60-digit
// oracle are below 1/50 of it).
func logSumSlack(lam float64) float64 {
	lg, _ := math.Lgamma(lam + 1)
	return 64 * 0x1p-52 * (3*lg + 32*lam)
}

// finite returns v, or an error wrapping ErrOrderUnsupported when v
// overflowed: the bound is vacuous there (larger than any float64), which
// the Accountant treats as an unusable order rather than a result.
func finite(v, order float64, name string) (float64, error) {
	if math.IsInf(v, 1) || math.IsNaN(v) {
		return 0, fmt.Errorf("%s at order %g overflows (vacuous): %w", name, order, ErrOrderUnsupported)
	}
	return v, nil
}
