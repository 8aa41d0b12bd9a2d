package accounting

import (
	"math"

	"github.com/shuffledp/shuffledp/internal/logmath"
)

// negligibleLog is how far below the running log-sum a rigorous bound on a
// series' remaining tail must lie before the tail is replaced by that bound:
// e^-40 ≈ 4e-18, below float64 resolution of the sum.
const negligibleLog = 40

// exactForTesting switches off every shortcut that replaces exact terms by
// upper bounds (series truncation, WBK19's sparse base orders), so that
// tests can check the shortcuts against the literal sums.
var exactForTesting = false

// addSeries adds the non-negative terms e^{term(j)}, j = from..to, to s and
// stops early when the rest is provably negligible. tail(j) must return the
// log of an upper bound on sum_{m=j..to} e^{term(m)} (or +Inf when it has
// none); once that bound lies negligibleLog below the running sum, it is
// added in place of the terms. The result is therefore never smaller than
// the full sum: truncation only ever over-estimates an upper bound.
func addSeries(s *logmath.Accumulator, from, to int, term, tail func(j int) float64) {
	for j := from; j <= to; j++ {
		if (j-from)&3 == 3 && !exactForTesting {
			if tb := tail(j); tb < s.Value()-negligibleLog {
				s.Add(tb)
				return
			}
		}
		s.Add(term(j))
	}
}

// geometricTail returns the log of an upper bound on sum_{m>=j} t_m given
// log t_j = logT and log r = logR, where every ratio t_{m+1}/t_m, m >= j,
// is at most r: for r <= 1/2 the geometric series gives t_j/(1-r) <= 2 t_j.
// It is +Inf when r > 1/2 (keep summing).
func geometricTail(logT, logR float64) float64 {
	if !(logR <= -math.Ln2) {
		return math.Inf(1)
	}
	return logT + math.Ln2
}
