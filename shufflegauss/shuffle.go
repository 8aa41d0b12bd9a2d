package shufflegauss

import (
	"fmt"
	"math"
	"sync"
)

// Shuffle is the shuffle Gaussian mechanism of the ICLR'23 submission:
// n clients each release x_i + N(0, sigma^2 I) with ||x_i||_2 <= 1 and a
// trusted shuffler permutes the n reports. Its RDP is Theorem 1 (eq. 4).
//
// Shuffle implements the accounting.RDP interface (Name, RDP). It caches
// the moments of every integer order computed so far, so evaluating orders
// 2..L costs one O(L^2) recurrence in total, and it is safe for concurrent
// use.
//
// Caveat (from the paper, not proven there): eq. 4 is D_lambda(M(D')||M(D))
// for D = (0,...,0), D' = (1,0,...,0); the paper asserts it is the worst
// case over adjacent datasets and both directions.
type Shuffle struct {
	sigma float64
	n     int64

	mu     sync.Mutex
	logA   []float64 // log A(m), m = 0..len-1, without slack
	capped []float64 // see cappedLogMoments
	tables tables
}

// NewShuffle returns the shuffle Gaussian mechanism with noise standard
// deviation sigma (in units of the L2 sensitivity) and n shuffled clients.
func NewShuffle(sigma float64, n int64) (*Shuffle, error) {
	if err := checkSigma(sigma); err != nil {
		return nil, err
	}
	if n < 1 {
		return nil, fmt.Errorf("n must be >= 1, got %d", n)
	}
	return &Shuffle{sigma: sigma, n: n}, nil
}

func checkSigma(sigma float64) error {
	if !(sigma > 0) || math.IsInf(sigma, 0) {
		return fmt.Errorf("sigma must be positive and finite, got %g", sigma)
	}
	return nil
}

// Sigma returns the noise standard deviation.
func (s *Shuffle) Sigma() float64 { return s.sigma }

// N returns the number of shuffled clients.
func (s *Shuffle) N() int64 { return s.n }

// Name identifies the mechanism and its parameters.
func (s *Shuffle) Name() string {
	return fmt.Sprintf("shuffle-gaussian(sigma=%g, n=%d)", s.sigma, s.n)
}

// halfInvVar returns 1/(2 sigma^2).
func (s *Shuffle) halfInvVar() float64 { return 1 / (2 * s.sigma * s.sigma) }

// ensure makes log A(m) available for m = 0..order. The caller holds s.mu.
func (s *Shuffle) ensure(order int) {
	if order < len(s.logA) {
		return
	}
	// Grow geometrically so that repeated requests for rising orders cost
	// O(L^2) in total.
	target := order
	if c := 2 * len(s.logA); c > target && c <= maxOrder {
		target = c
	}
	if target < 64 {
		target = 64
	}
	// Stay on Miller's recurrence (cheaper than powering) when the
	// requested order allows it.
	if int64(order) <= s.n+1 && int64(target) > s.n+1 {
		target = int(s.n + 1)
	}
	if len(s.tables.logInt) <= target {
		s.tables = newTables(target)
	}
	if int64(target) <= s.n+1 {
		if len(s.logA) == 0 {
			s.logA = []float64{0}
		}
		s.logA = millerLogMoments(s.logA, target, float64(s.n), s.halfInvVar(), s.tables)
		return
	}
	s.logA = powerLogMoments(target, s.n, s.halfInvVar(), s.tables)
}

// LogMoment returns an upper bound on log A(order) of Theorem 1 (eq. 4),
// i.e. (order-1) times the RDP at the integer order: the exact value plus
// a rounding slack (see logMomentSlack). Orders must be integers
// in [1, 65536]; LogMoment(1) = 0.
func (s *Shuffle) LogMoment(order int) (float64, error) {
	if order < 1 || order > maxOrder {
		return 0, fmt.Errorf("order must be an integer in [1, %d], got %d", maxOrder, order)
	}
	if order == 1 {
		return 0, nil
	}
	s.mu.Lock()
	s.ensure(order)
	v := s.logA[order]
	s.mu.Unlock()
	return v + logMomentSlack(order, v, s.halfInvVar()), nil
}

// cappedLogMoments returns, for j = 0..upTo, LogMoment(j) capped by
// Corollary 1 ((j-1) eps(j) <= j(j-1)/(2 sigma^2)); both are upper bounds.
// The slice is shared and must not be modified. Entry 0 is unused (0).
// One lock per call instead of one per order: eq. (10) reads every order
// up to lambda.
func (s *Shuffle) cappedLogMoments(upTo int) ([]float64, error) {
	if upTo < 1 || upTo > maxOrder {
		return nil, fmt.Errorf("order must be an integer in [1, %d], got %d", maxOrder, upTo)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if upTo < len(s.capped) {
		return s.capped[:upTo+1], nil
	}
	s.ensure(upTo)
	h := s.halfInvVar()
	for j := len(s.capped); j <= upTo; j++ {
		v := 0.0
		if j >= 2 {
			l := float64(j)
			v = math.Min(s.logA[j]+logMomentSlack(j, s.logA[j], h), l*(l-1)*h*(1+4*unitRoundoff))
		}
		s.capped = append(s.capped, v)
	}
	return s.capped[:upTo+1], nil
}

// RDP returns eps(order) of Theorem 1: log A(order)/(order-1), capped by
// Corollary 1 (eps(lambda) <= lambda/(2 sigma^2), the RDP of the Gaussian
// mechanism without shuffling), which the paper proves for every n.
//
// Non-integer orders: lambda -> log E[(dP/dQ)^lambda] is convex (Hölder), so
// (lambda-1) eps(lambda) is bounded above by the chord between the
// neighbouring integer orders floor(lambda) and floor(lambda)+1 (with
// log A(1) = 0). RDP returns that interpolated upper bound.
//
// The cap by Corollary 1 holds at every real order and for every pair of
// adjacent datasets in both directions, without the paper's worst-case
// assumption: shuffling is post-processing of the unshuffled Gaussian
// mechanism, whose RDP is lambda/(2 sigma^2).
func (s *Shuffle) RDP(order float64) (float64, error) {
	eps, err := interpolateRDP(order, s.LogMoment)
	if err != nil {
		return 0, err
	}
	// Cor. 1, rounded up by a few ulps.
	return math.Min(eps, order*s.halfInvVar()*(1+4*unitRoundoff)), nil
}

// interpolateRDP turns an integer-order log-moment function into an RDP
// curve at any real order > 1, interpolating log-moments linearly between
// neighbouring integers (an upper bound by convexity of the log-moment).
func interpolateRDP(order float64, logMoment func(int) (float64, error)) (float64, error) {
	if math.IsNaN(order) || order <= 1 || order > maxOrder {
		return 0, fmt.Errorf("order must be in (1, %d], got %g", maxOrder, order)
	}
	lo := math.Floor(order)
	if lo == order {
		v, err := logMoment(int(lo))
		if err != nil {
			return 0, err
		}
		return v / (order - 1), nil
	}
	vlo, err := logMoment(int(lo))
	if err != nil {
		return 0, err
	}
	vhi, err := logMoment(int(lo) + 1)
	if err != nil {
		return 0, err
	}
	f := order - lo
	return ((1-f)*vlo + f*vhi) / (order - 1), nil
}
