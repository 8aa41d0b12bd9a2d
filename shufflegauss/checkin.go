package shufflegauss

import (
	"fmt"
	"math"
	"sync"

	"github.com/shuffledp/shuffledp/internal/logmath"
)

// CheckInMethod selects how the shuffled check-in RDP is evaluated.
type CheckInMethod int

const (
	// CheckInMixture evaluates eq. (11) of the ICLR'23 submission as the
	// binomial mixture it is (see CheckIn).
	CheckInMixture CheckInMethod = iota
	// CheckInChernoff evaluates eq. (13) (Theorem 3), minimised over Delta.
	CheckInChernoff
)

// CheckIn is the shuffled check-in Gaussian mechanism (Liew et al. 2022;
// ICLR'23 submission Section 4.2): each of n clients independently checks
// in with probability gamma, adds N(0, sigma^2) noise, and the K ~ Bin(n,
// gamma) reports are shuffled. Eq. (11) bounds its RDP by
//
//	eps(lambda) <= 1/(lambda-1) log sum_k Bin(k; n, gamma) e^{(lambda-1) eps^SSG_{gamma,k}(lambda)},
//
// with eps^SSG_{gamma,k} the eq. (10) bound with k shuffled reports and
// ratio gamma. We include the k = 0 term (no report, divergence 0) that
// the printed sum omits; it can only enlarge the bound.
//
// Evaluation (CheckInMixture). E_k = e^{(lambda-1) eps^SSG_{gamma,k}} does
// not increase with k: Theorem 1's moment A_k(j) = E[(mean of k i.i.d.
// likelihood factors)^j] is non-increasing in k because the mean of k is the
// average of its k leave-one-out means and x^j is convex (Jensen) — this
// proves the monotonicity the paper assumes in eq. (12) — and eq. (10) is
// increasing in every A(j). Hence every block of k can be bounded by the
// value at its left end times its probability mass:
//   - k = 0: mass (1-gamma)^n times 1;
//   - 1 <= k < a/2 and a/2 <= k < a: E_1 resp. E_{a/2} times a Chernoff
//     bound on P(K < a/2) resp. P(K < a);
//   - a <= k <= c (a, c = n gamma -/+ 10 standard deviations): geometric
//     blocks of relative width Resolution, exact binomial masses;
//   - k > c: E_c times a Chernoff bound on P(K > c).
//
// The result is a rigorous upper bound on eq. (11); its looseness is about
// Resolution relative in the log-moment (default 1/256), plus tail terms
// that are negligible at the orders that minimise epsilon. It is exact
// term by term with Resolution 0 (every k = 0..n; affordable for small n).
//
// CheckInChernoff evaluates eq. (13): for Delta in (0,1),
// log( E_1 e^{-Delta^2 n gamma/2} + E_{floor((1-Delta) n gamma)+1} ), minimised
// over a grid of Delta; valid by the monotonicity above.
//
// Both inherit Theorem 1's worst-case-pair assumption (see the package doc).
type CheckIn struct {
	sigma  float64
	n      int64
	gamma  float64
	method CheckInMethod
	// Resolution is the relative width of the geometric blocks of k in the
	// bulk of the binomial (CheckInMixture); 0 means one block per k.
	resolution float64

	mu     sync.Mutex
	inner  map[int64]*Shuffle
	blocks []checkInBlock
	cache  map[int]float64
}

// checkInBlock is a range of k bounded by the value at k = start, with log
// probability mass logMass (an upper bound on P(K in block)).
type checkInBlock struct {
	start   int64
	logMass float64
}

// NewCheckIn returns the shuffled check-in Gaussian mechanism with noise
// sigma, n clients and check-in rate gamma in (0, 1].
func NewCheckIn(sigma float64, n int64, gamma float64, method CheckInMethod) (*CheckIn, error) {
	if err := checkSigma(sigma); err != nil {
		return nil, err
	}
	if n < 1 {
		return nil, fmt.Errorf("n must be >= 1, got %d", n)
	}
	if !(gamma > 0 && gamma <= 1) {
		return nil, fmt.Errorf("rate (check-in probability) must be in (0, 1], got %g", gamma)
	}
	if method != CheckInMixture && method != CheckInChernoff {
		return nil, fmt.Errorf("unknown check-in method %d", method)
	}
	c := &CheckIn{sigma: sigma, n: n, gamma: gamma, method: method, resolution: 1.0 / 256,
		inner: map[int64]*Shuffle{}, cache: map[int]float64{}}
	return c, nil
}

// SetResolution sets the relative block width of CheckInMixture (0: exact,
// one block per k for every k = 0..n, O(n) recurrences — only for small n;
// must be < 1). It clears cached values.
func (c *CheckIn) SetResolution(r float64) error {
	if !(r >= 0 && r < 1) {
		return fmt.Errorf("resolution must be in [0, 1), got %g", r)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.resolution = r
	c.blocks = nil
	c.cache = map[int]float64{}
	return nil
}

// Name identifies the mechanism and its parameters.
func (c *CheckIn) Name() string {
	eq := "eq11"
	if c.method == CheckInChernoff {
		eq = "eq13"
	}
	return fmt.Sprintf("checkin-gaussian(sigma=%g, n=%d, rate=%g, %s)", c.sigma, c.n, c.gamma, eq)
}

// RDP returns the check-in bound at the given order (interpolated between
// integer orders; an upper bound by convexity).
func (c *CheckIn) RDP(order float64) (float64, error) {
	return interpolateRDP(order, c.LogMoment)
}

// LogMoment returns (order-1) times the RDP bound at an integer order.
func (c *CheckIn) LogMoment(order int) (float64, error) {
	if order == 1 {
		return 0, nil
	}
	if order < 2 || order > maxOrder {
		return 0, fmt.Errorf("order must be an integer in [2, %d], got %d", maxOrder, order)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := c.cache[order]; ok {
		return v, nil
	}
	var v float64
	var err error
	if c.method == CheckInChernoff {
		v, err = c.chernoffLogMoment(order)
	} else {
		v, err = c.mixtureLogMoment(order)
	}
	if err != nil {
		return 0, err
	}
	c.cache[order] = v
	return v, nil
}

// logE returns log E_k = (lambda-1) eps^SSG_{gamma,k}(lambda) (eq. 10 with k
// shuffled reports); log E_0 = 0. The caller holds c.mu.
func (c *CheckIn) logE(k int64, lambda int) (float64, error) {
	if k <= 0 {
		return 0, nil
	}
	s, ok := c.inner[k]
	if !ok {
		s, _ = NewShuffle(c.sigma, k)
		c.inner[k] = s
	}
	return subsampledLogMoment(s, c.gamma, lambda)
}

// logChernoffBelow bounds log P(K <= x) for K ~ Bin(n, p), x < n p:
// -n KL(x/n || p); 0 otherwise.
func logChernoffBelow(x float64, n int64, p float64) float64 {
	nn := float64(n)
	if x < 0 {
		return math.Inf(-1)
	}
	if x >= nn*p {
		return 0
	}
	return -nn * binaryKL(x/nn, p)
}

// logChernoffAbove bounds log P(K >= x), x > n p.
func logChernoffAbove(x float64, n int64, p float64) float64 {
	nn := float64(n)
	if x > nn {
		return math.Inf(-1)
	}
	if x <= nn*p {
		return 0
	}
	return -nn * binaryKL(x/nn, p)
}

// binaryKL is KL(Bern(q) || Bern(p)).
func binaryKL(q, p float64) float64 {
	kl := 0.0
	if q > 0 {
		kl += q * logmath.Log(q/p)
	}
	if q < 1 {
		kl += (1 - q) * (math.Log1p(-q) - math.Log1p(-p))
	}
	return math.Max(kl, 0)
}

// logBinomPMF returns log Bin(k; n, p).
func logBinomPMF(k, n int64, p float64) float64 {
	if p == 1 {
		if k == n {
			return 0
		}
		return math.Inf(-1)
	}
	return logmath.LogBinom(float64(n), float64(k)) + float64(k)*logmath.Log(p) + float64(n-k)*math.Log1p(-p)
}

// buildBlocks partitions k = 0..n into blocks (see the CheckIn doc).
func (c *CheckIn) buildBlocks() {
	n, p := c.n, c.gamma
	mean := float64(n) * p
	sd := math.Sqrt(mean * (1 - p))
	a := int64(math.Max(1, math.Floor(mean-10*sd)))
	cc := int64(math.Min(float64(n), math.Ceil(mean+10*sd)))
	if c.resolution == 0 { // exact: every k, no tail bounds
		a, cc = 1, n
	}
	var b []checkInBlock
	// k = 0: exact mass, value 1.
	if l0 := logBinomPMF(0, n, p); !math.IsInf(l0, -1) {
		b = append(b, checkInBlock{start: 0, logMass: l0})
	}
	if a > 1 {
		half := max(1, a/2)
		if half > 1 {
			b = append(b, checkInBlock{start: 1, logMass: logChernoffBelow(float64(half-1), n, p)})
		}
		b = append(b, checkInBlock{start: half, logMass: logChernoffBelow(float64(a-1), n, p)})
	}
	for k := a; k <= cc; {
		next := k + 1
		if c.resolution > 0 {
			next = max(k+1, int64(math.Floor(float64(k)*(1+c.resolution))))
		}
		if next > cc+1 {
			next = cc + 1
		}
		terms := make([]float64, 0, next-k)
		for j := k; j < next; j++ {
			terms = append(terms, logBinomPMF(j, n, p))
		}
		// Round the mass up by a few ulps per term (pmf rounding).
		lm := logmath.LogSumExp(terms) + 16*unitRoundoff*float64(len(terms))*(1+math.Abs(terms[0]))
		b = append(b, checkInBlock{start: k, logMass: lm})
		k = next
	}
	if cc < n {
		b = append(b, checkInBlock{start: cc, logMass: logChernoffAbove(float64(cc+1), n, p)})
	}
	c.blocks = b
}

func (c *CheckIn) mixtureLogMoment(lambda int) (float64, error) {
	if c.blocks == nil {
		c.buildBlocks()
	}
	terms := make([]float64, 0, len(c.blocks))
	for _, bl := range c.blocks {
		if math.IsInf(bl.logMass, -1) {
			continue
		}
		le, err := c.logE(bl.start, lambda)
		if err != nil {
			return 0, err
		}
		terms = append(terms, bl.logMass+le)
	}
	v := logmath.LogSumExp(terms)
	return math.Max(v, 0) + 16*unitRoundoff*(1+math.Abs(v)), nil
}

func (c *CheckIn) chernoffLogMoment(lambda int) (float64, error) {
	ng := float64(c.n) * c.gamma
	le1, err := c.logE(1, lambda)
	if err != nil {
		return 0, err
	}
	best := le1 // Delta = 1 reduces to E_1 (with E_{1} as the second term) — a valid bound
	for i := 1; i < 32; i++ {
		delta := float64(i) / 32
		k := int64(math.Floor((1-delta)*ng)) + 1
		if k > c.n {
			k = c.n
		}
		lek, err := c.logE(k, lambda)
		if err != nil {
			return 0, err
		}
		v := logmath.LogAddExp(le1-delta*delta*ng/2, lek)
		if v < best {
			best = v
		}
	}
	return best + 16*unitRoundoff*(1+math.Abs(best)), nil
}
