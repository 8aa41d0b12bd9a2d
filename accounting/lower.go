package accounting

import (
	"math"

	"github.com/shuffledp/shuffledp/internal/logmath"
)

// SubsampledShuffleLower is the RDP lower bound of the subsampled shuffle
// model (NeurIPS'21 Theorem 2): the exact Rényi divergence D_lambda(M(D')||M(D))
// of shuffled binary randomized response on D = (0,...,0), D' = (0,...,0,1),
// when k of n clients are sampled. With m ~ Bin(k, p), p = 1/(e^eps0+1),
// gamma = k/n, for integer lambda >= 2:
//
//	eps(lambda) >= 1/(lambda-1) log( 1 + C(lambda,2) gamma^2 (e^eps0-1)^2/(k e^eps0)
//	    + sum_{j=3..lambda} C(lambda,j) gamma^j ((e^{2eps0}-1)/(k e^eps0))^j E[(m - kp)^j] ).
//
// By the binomial theorem (E[m - kp] = 0) the bracket equals
// E[(1 + gamma (L(m) - 1))^lambda] with the likelihood ratio
// L(m) = (e^eps0 - e^-eps0) m/k + e^-eps0 > 0, so it is evaluated as a sum of
// positive terms over m in log space: no central moment is formed and
// nothing cancels, for k up to 1e9: with Y = gamma (L(m) - 1), the bound is
// log(1 + E[(1+Y)^lambda - 1 - lambda Y])/(lambda-1), and every summand
// pmf(m) ((1+Y)^lambda - 1 - lambda Y) is non-negative, so even values near
// 1e-12 keep full relative precision. The sum runs over the m where one of
// two log-concave envelopes is within 80 nats of its maximum (dropping
// terms only lowers a lower bound).
//
// This is a lower bound: it says how tight the upper bounds are, it is not a
// privacy guarantee. Only integer orders are supported, as in the theorem.
func SubsampledShuffleLower(n, k int64, eps0 float64) (RDP, error) {
	if err := validateShuffle(n, k, eps0); err != nil {
		return nil, err
	}
	return &binaryRRLower{n: n, k: k, eps0: eps0, name: BoundNeurIPS21Lower}, nil
}

// ShuffleLower is CCS'21 Theorem 3.4: SubsampledShuffleLower with k = n,
// equivalently (1/(lambda-1)) log E[(m (e^eps0 - e^-eps0)/n + e^-eps0)^lambda],
// m ~ Bin(n, 1/(e^eps0+1)). A lower bound, integer orders only.
func ShuffleLower(n int64, eps0 float64) (RDP, error) {
	if err := validateShuffle(n, n, eps0); err != nil {
		return nil, err
	}
	return &binaryRRLower{n: n, k: n, eps0: eps0, name: BoundCCS21Lower}, nil
}

type binaryRRLower struct {
	n, k int64
	eps0 float64
	name string
}

func (b *binaryRRLower) Name() string       { return b.name }
func (b *binaryRRLower) IsLowerBound() bool { return true }

func (b *binaryRRLower) RDP(order float64) (float64, error) {
	if err := checkOrder(order, true); err != nil {
		return 0, err
	}
	if b.eps0 == 0 {
		return 0, nil
	}
	e0, k := b.eps0, float64(b.k)
	gamma := k / float64(b.n)
	logP := -logmath.Log1pExp(e0)  // log 1/(e^eps0+1)
	logQ := -logmath.Log1pExp(-e0) // log e^eps0/(e^eps0+1)
	slope := (math.Exp(e0) - math.Exp(-e0)) / k
	base := math.Exp(-e0) - 1 // L(m) - 1 = slope*m + base
	y := func(m float64) float64 { return gamma * (slope*m + base) }
	logPMF := func(m float64) float64 { return logmath.LogBinom(k, m) + m*logP + (k-m)*logQ }
	// Two log-concave envelopes of the summand pmf(m) f(Y_m):
	// pmf(m) (1+Y_m)^lambda and pmf(m) itself, since 0 <= f(Y) <= (1+Y)^lambda + lambda|Y|.
	tilted := func(m float64) float64 { return logPMF(m) + order*math.Log1p(y(m)) }
	var s logmath.Accumulator = logmath.NewAccumulator()
	var done [][2]float64
	for _, env := range []func(float64) float64{tilted, logPMF} {
		a, b := cutoffInterval(env, k, lowerCutoff)
		// Skip what an earlier interval already summed.
		for _, d := range done {
			if a >= d[0] && a <= d[1] {
				a = d[1] + 1
			}
			if b >= d[0] && b <= d[1] {
				b = d[0] - 1
			}
		}
		for m := a; m <= b; m++ {
			s.Add(logPMF(m) + logRemainder(y(m), order))
		}
		if a <= b {
			done = append(done, [2]float64{a, b})
		}
	}
	return finite(logmath.Log1pExp(s.Value())/(order-1), order, b.name)
}

// lowerCutoff: terms more than this many nats below an envelope's maximum
// are not summed (dropping them only lowers a lower bound).
const lowerCutoff = 80

// cutoffInterval returns the integer interval [a, b] of 0..k on which the
// log-concave function env is within cut of its maximum, by ternary search
// for the maximum and binary search for the two ends.
func cutoffInterval(env func(float64) float64, k, cut float64) (float64, float64) {
	lo, hi := 0.0, k
	for hi-lo > 2 {
		m1 := math.Floor(lo + (hi-lo)/3)
		m2 := math.Ceil(hi - (hi-lo)/3)
		if m1 >= m2 {
			break
		}
		if env(m1) < env(m2) {
			lo = m1 + 1
		} else {
			hi = m2 - 1
		}
	}
	mode, top := lo, env(lo)
	for m := lo + 1; m <= hi; m++ {
		if t := env(m); t > top {
			mode, top = m, t
		}
	}
	thr := top - cut
	// Largest b >= mode with env(b) >= thr.
	l, r := mode, k
	for l < r {
		mid := math.Ceil((l + r) / 2)
		if env(mid) >= thr {
			l = mid
		} else {
			r = mid - 1
		}
	}
	b := l
	l, r = 0, mode
	for l < r {
		mid := math.Floor((l + r) / 2)
		if env(mid) >= thr {
			r = mid
		} else {
			l = mid + 1
		}
	}
	return l, b
}

// logRemainder returns log((1+y)^lambda - 1 - lambda y) for y > -1, which is
// >= 0 by Bernoulli's inequality. For |lambda y| < 0.01 it sums the binomial
// series sum_{j>=2} C(lambda,j) y^j (no cancellation); otherwise it uses
// expm1, losing at most a factor 2/(lambda|y|) <= 200 ulps.
func logRemainder(y, lambda float64) float64 {
	if y == 0 {
		return math.Inf(-1)
	}
	if math.Abs(lambda*y) < 0.01 {
		sum, term := 0.0, 1.0
		for j := 1.0; j <= 40 && j <= lambda; j++ {
			term *= (lambda - j + 1) / j * y
			if j >= 2 {
				sum += term
			}
		}
		if sum <= 0 {
			return math.Inf(-1)
		}
		return logmath.Log(sum)
	}
	u := lambda * math.Log1p(y)
	if u > 30 {
		return u + math.Log1p(-math.Exp(-u)*(1+lambda*y))
	}
	f := math.Expm1(u) - lambda*y
	if f <= 0 {
		return math.Inf(-1)
	}
	return logmath.Log(f)
}
