package shufflegauss

import (
	"math"

	"github.com/shuffledp/shuffledp/internal/logmath"
)

// maxOrder bounds the integer orders for which the moment table is built
// (memory O(maxOrder), time O(maxOrder^2)).
const maxOrder = 1 << 16

// unitRoundoff is 2^-53, the relative rounding error of float64.
const unitRoundoff = 1.0 / (1 << 53)

// logMomentSlack is the amount added to a computed log A(m) so that the
// returned value is an upper bound despite floating-point rounding. The
// recurrences sum non-negative terms only, so the relative error of A(m)
// grows at most linearly in m: we allow 64 ulps per row relative to
// 1 + |log A|. Where the term with all m draws on one client dominates
// (orders near 2 sigma^2 log n and beyond), the exponents summed are of
// size c_m = m(m-1)/(2 sigma^2) and cancel to a much smaller log A; for
// that we add 64 sqrt(m) ulps of c_m. Against the 400-digit mpmath oracle
// (testdata/golden.json) the observed error is below 1/8 of this slack.
func logMomentSlack(m int, logA, halfInvVar float64) float64 {
	fm := float64(m)
	cm := fm * (fm - 1) * halfInvVar
	return 64 * unitRoundoff * ((fm+1)*(1+math.Abs(logA)) + math.Sqrt(fm)*cm)
}

// tables holds log m and log m! for m = 0..len-1.
type tables struct {
	logInt  []float64 // logInt[m] = log m (logInt[0] unused)
	logFact []float64 // logFact[m] = log m!
}

func newTables(size int) tables {
	t := tables{logInt: make([]float64, size+1), logFact: make([]float64, size+1)}
	t.logInt[0] = math.Inf(-1)
	for m := 1; m <= size; m++ {
		t.logInt[m] = logmath.Log(float64(m))
		t.logFact[m], _ = math.Lgamma(float64(m) + 1) // a few ulps, no accumulation
	}
	return t
}

// millerLogMoments extends logA (log A(m) for m < len(logA), logA[0] = 0)
// up to and including order upTo with Miller's recurrence for the power
// f(x)^n, normalised so that it produces A(m) directly:
//
//	A(m) = sum_{j=1..m} (1 + (1 - m/j)/n) * C(m-1, j-1) n^{-(j-1)} e^{j(j-1)/(2 sigma^2)} A(m-j).
//
// (From g_m = (1/m) sum_j ((n+1) j - m) f_j g_{m-j}, g = f^n,
// f_j = e^{j^2/(2 sigma^2)}/j!, and A(m) = e^{-m/(2 sigma^2)} m! g_m / n^m.)
// Every weight is non-negative as long as m <= n+1, so the log-sum-exp is
// exact to rounding; the caller must not ask for m > n+1.
func millerLogMoments(logA []float64, upTo int, n float64, halfInvVar float64, t tables) []float64 {
	logN := logmath.Log(n)
	buf := make([]float64, upTo+1)
	for m := len(logA); m <= upTo; m++ {
		// Pass 1: exponents e_j and their maximum.
		d := 0.0 // log C(m-1, j-1) - (j-1) log n, built incrementally
		mx := math.Inf(-1)
		for j := 1; j <= m; j++ {
			if j > 1 {
				d += t.logInt[m-j+1] - t.logInt[j-1] - logN
			}
			e := d + float64(j)*float64(j-1)*halfInvVar + logA[m-j]
			buf[j] = e
			if e > mx {
				mx = e
			}
		}
		// Pass 2: weighted sum relative to the maximum.
		// Terms below e^{-40} of the largest are not exponentiated; each is
		// replaced by its upper bound (1+1/n) e^{-40}, so skipping them can
		// only round the sum up.
		s, skipped := 0.0, 0
		fm := float64(m)
		cut := mx - 40
		for j := 1; j <= m; j++ {
			if buf[j] < cut {
				skipped++
				continue
			}
			w := 1 + (1-fm/float64(j))/n
			s += w * math.Exp(buf[j]-mx)
		}
		s += float64(skipped) * (1 + 1/n) * math.Exp(-40)
		logA = append(logA, mx+logmath.Log(s))
	}
	return logA
}

// powerLogMoments returns log A_n(m) for m = 0..upTo by binary powering of
// the one-client moment sequence A_1(m) = e^{m(m-1)/(2 sigma^2)}. Moments of
// a+b clients are a binomial mixture of those of a and b clients,
//
//	A_{a+b}(m) = sum_{i=0..m} Bin(i; m, a/(a+b)) A_a(i) A_b(m-i),
//
// because the multinomial allocation of m draws to a+b bins splits
// binomially between the first a and the last b bins. All terms are
// non-negative, so this is exact to rounding for every n (used when some
// order exceeds n+1, where Miller's recurrence changes sign).
func powerLogMoments(upTo int, n int64, halfInvVar float64, t tables) []float64 {
	base := make([]float64, upTo+1)
	for m := range base {
		base[m] = float64(m) * float64(m-1) * halfInvVar
	}
	res := append([]float64(nil), base...)
	k := int64(1)
	top := 62
	for top >= 0 && n>>uint(top)&1 == 0 {
		top--
	}
	buf := make([]float64, upTo+1)
	for bit := top - 1; bit >= 0; bit-- {
		res = convolveMoments(res, k, res, k, buf, t)
		k *= 2
		if n>>uint(bit)&1 == 1 {
			res = convolveMoments(res, k, base, 1, buf, t)
			k++
		}
	}
	return res
}

// convolveMoments combines log-moment sequences of a and b clients into the
// sequence of a+b clients (see powerLogMoments).
func convolveMoments(la []float64, a int64, lb []float64, b int64, buf []float64, t tables) []float64 {
	out := make([]float64, len(la))
	if a == b && len(la) == len(lb) && len(la) > 0 && &la[0] == &lb[0] {
		return squareMoments(la, out, buf, t)
	}
	p := float64(a) / float64(a+b)
	lp, lq := logmath.Log(p), math.Log1p(-p)
	for m := range out {
		mx := math.Inf(-1)
		for i := 0; i <= m; i++ {
			e := t.logFact[m] - t.logFact[i] - t.logFact[m-i] + float64(i)*lp + float64(m-i)*lq + la[i] + lb[m-i]
			buf[i] = e
			if e > mx {
				mx = e
			}
		}
		// As in millerLogMoments: terms below e^{-40} of the largest count
		// as e^{-40} (an upper bound) instead of being exponentiated.
		s, skipped := 0.0, 0
		cut := mx - 40
		for i := 0; i <= m; i++ {
			if buf[i] < cut {
				skipped++
				continue
			}
			s += math.Exp(buf[i] - mx)
		}
		s += float64(skipped) * math.Exp(-40)
		out[m] = mx + logmath.Log(s)
	}
	return out
}

// squareMoments is convolveMoments of a sequence with itself (a = b, so
// p = 1/2): term i equals term m-i, so only i <= m/2 is computed and the
// terms with i < m-i are counted twice.
func squareMoments(la, out, buf []float64, t tables) []float64 {
	lh := -math.Ln2
	for m := range out {
		mx := math.Inf(-1)
		half := m / 2
		for i := 0; i <= half; i++ {
			e := t.logFact[m] - t.logFact[i] - t.logFact[m-i] + float64(m)*lh + la[i] + la[m-i]
			buf[i] = e
			if e > mx {
				mx = e
			}
		}
		// Terms below e^{-40} of the largest count as e^{-40} (an upper
		// bound), as in convolveMoments.
		s, skipped := 0.0, 0.0
		cut := mx - 40
		for i := 0; i <= half; i++ {
			w := 2.0
			if 2*i == m {
				w = 1
			}
			if buf[i] < cut {
				skipped += w
				continue
			}
			s += w * math.Exp(buf[i]-mx)
		}
		s += skipped * math.Exp(-40)
		out[m] = mx + logmath.Log(s)
	}
	return out
}
