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
// nothing cancels, for k up to 1e9. The summand is log-concave in m; the sum
// runs outward from its maximum until terms fall 80 nats below it (dropping
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
	term := func(m float64) float64 {
		lpmf := logmath.LogBinom(k, m) + m*logP + (k-m)*logQ
		return lpmf + order*math.Log1p(gamma*(slope*m+base))
	}
	// Integer ternary search for the maximum of the log-concave summand.
	lo, hi := 0.0, k
	for hi-lo > 2 {
		m1 := math.Floor(lo + (hi-lo)/3)
		m2 := math.Ceil(hi - (hi-lo)/3)
		if m1 == m2 {
			m2++
		}
		if term(m1) < term(m2) {
			lo = m1 + 1
		} else {
			hi = m2 - 1
		}
	}
	mode, tmax := lo, term(lo)
	for m := lo + 1; m <= hi; m++ {
		if t := term(m); t > tmax {
			mode, tmax = m, t
		}
	}
	s := newLSE()
	s.add(tmax)
	const cutoff = 80
	for m := mode + 1; m <= k; m++ {
		t := term(m)
		s.add(t)
		if t < tmax-cutoff {
			break
		}
	}
	for m := mode - 1; m >= 0; m-- {
		t := term(m)
		s.add(t)
		if t < tmax-cutoff {
			break
		}
	}
	v := s.value() / (order - 1)
	if v < 0 { // E[L^lambda] >= 1 by Jensen; guard rounding
		v = 0
	}
	return v, nil
}
