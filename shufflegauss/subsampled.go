package shufflegauss

import (
	"fmt"
	"math"
	"sync"

	"github.com/shuffledp/shuffledp/internal/logmath"
)

// Subsampled is the subsampled shuffle Gaussian mechanism of the ICLR'23
// submission, Section 4.1: each round m of the n clients are sampled
// without replacement, each adds N(0, sigma^2) noise, and the m reports are
// shuffled. Its RDP is Theorem 2, eq. (10):
//
//	eps(lambda) <= 1/(lambda-1) log( 1 + gamma^2 C(lambda,2) min{4(e^{eps_m(2)}-1), 2 e^{eps_m(2)}}
//	                               + sum_{j=3..lambda} 2 gamma^j C(lambda,j) e^{(j-1) eps_m(j)} ),
//
// gamma = m/n, eps_m the shuffle Gaussian RDP of Theorem 1 with m clients.
// This is Wang, Balle and Kasiviswanathan (AISTATS 2019) Thm 9 with
// eps(inf) = inf (the Gaussian mechanism has no pure-DP guarantee), for
// integer orders; non-integer orders are interpolated as in Shuffle.RDP.
// It inherits Theorem 1's worst-case-pair assumption (see the package doc).
type Subsampled struct {
	inner *Shuffle
	n     int64
	gamma float64

	mu    sync.Mutex
	cache map[int]float64
}

// NewSubsampled returns the subsampled shuffle Gaussian mechanism: noise
// sigma, population n, m clients sampled (without replacement) per round.
func NewSubsampled(sigma float64, n, m int64) (*Subsampled, error) {
	if err := checkSigma(sigma); err != nil {
		return nil, err
	}
	if n < 1 {
		return nil, fmt.Errorf("n must be >= 1, got %d", n)
	}
	if m < 1 || m > n {
		return nil, fmt.Errorf("k (clients per round) must be in [1, n=%d], got %d", n, m)
	}
	inner, _ := NewShuffle(sigma, m)
	return &Subsampled{inner: inner, n: n, gamma: float64(m) / float64(n), cache: map[int]float64{}}, nil
}

// Name identifies the mechanism and its parameters.
func (s *Subsampled) Name() string {
	return fmt.Sprintf("subsampled-shuffle-gaussian(sigma=%g, n=%d, k=%d)", s.inner.sigma, s.n, s.inner.n)
}

// LogMoment returns (order-1) times the eq. (10) bound at an integer order
// >= 2, rounded up.
func (s *Subsampled) LogMoment(order int) (float64, error) {
	if order == 1 {
		return 0, nil
	}
	s.mu.Lock()
	v, ok := s.cache[order]
	s.mu.Unlock()
	if ok {
		return v, nil
	}
	v, err := subsampledLogMoment(s.inner, s.gamma, order)
	if err != nil {
		return 0, err
	}
	s.mu.Lock()
	s.cache[order] = v
	s.mu.Unlock()
	return v, nil
}

// RDP returns the eq. (10) bound at the given order (interpolated between
// integer orders; an upper bound by convexity).
func (s *Subsampled) RDP(order float64) (float64, error) {
	return interpolateRDP(order, s.LogMoment)
}

// subsampledLogMoment evaluates log of the eq. (10) argument at integer
// order lambda for inner mechanism inner and sampling ratio gamma.
func subsampledLogMoment(inner *Shuffle, gamma float64, lambda int) (float64, error) {
	if lambda < 2 || lambda > maxOrder {
		return 0, fmt.Errorf("order must be an integer in [2, %d], got %d", maxOrder, lambda)
	}
	capped, err := inner.cappedLogMoments(lambda)
	if err != nil {
		return 0, err
	}
	la2 := capped[2]
	lg := logmath.Log(gamma)
	l := float64(lambda)
	lf := logFactorials()
	lfl := lf[lambda]
	// Second-order term: gamma^2 C(lambda,2) min{4(A2-1), 2 A2}.
	second := math.Min(logmath.Log(4)+logmath.Log(math.Expm1(la2)), logmath.Log(2)+la2)
	terms := make([]float64, 0, lambda)
	terms = append(terms, 0, 2*lg+logmath.Log(l*(l-1)/2)+second)
	for j := 3; j <= lambda; j++ {
		terms = append(terms, math.Ln2+float64(j)*lg+lfl-lf[j]-lf[lambda-j]+capped[j])
	}
	v := logSumExpUpper(terms)
	// Rounding slack: the terms carry errors of a few ulps of log(lambda!)
	// and of the inner slack (already included); add 16 ulps of each.
	v += 16 * unitRoundoff * (lfl + 1 + math.Abs(v))
	return v, nil
}

var (
	logFactOnce  sync.Once
	logFactTable []float64
)

// logFactorials returns log m! for m = 0..maxOrder (computed once).
func logFactorials() []float64 {
	logFactOnce.Do(func() {
		logFactTable = make([]float64, maxOrder+1)
		for m := range logFactTable {
			logFactTable[m], _ = math.Lgamma(float64(m) + 1)
		}
	})
	return logFactTable
}

// logSumExpUpper returns an upper bound on log sum_i e^{xs_i}: terms below
// e^{-40} of the largest are not exponentiated but each counted as e^{-40}
// of it (as in millerLogMoments), which can only round the sum up.
func logSumExpUpper(xs []float64) float64 {
	mx := math.Inf(-1)
	for _, x := range xs {
		if x > mx {
			mx = x
		}
	}
	if math.IsInf(mx, 0) {
		return mx
	}
	s, skipped, cut := 0.0, 0, mx-40
	for _, x := range xs {
		if x < cut {
			skipped++
			continue
		}
		s += math.Exp(x - mx)
	}
	return mx + logmath.Log(s+float64(skipped)*math.Exp(-40))
}
