package sampledgauss

import (
	"fmt"
	"math"

	"github.com/shuffledp/shuffledp/accounting"
	"github.com/shuffledp/shuffledp/internal/logmath"
)

// Name is the curve name of the sampled Gaussian mechanism.
const Name = "sampled-gaussian"

// MaxOrder is the largest Rényi order evaluated (the work grows linearly
// with the order); larger orders return an error wrapping
// accounting.ErrOrderUnsupported.
const MaxOrder = 1 << 20

// Mechanism is the sampled Gaussian mechanism with Poisson sampling rate q
// and noise multiplier sigma (noise standard deviation in units of the L2
// sensitivity). It implements accounting.RDP; it holds no state beyond its
// parameters and is safe for concurrent use.
type Mechanism struct {
	q, sigma float64
}

// New returns the sampled Gaussian mechanism with sampling rate in (0, 1]
// and noise multiplier sigma > 0.
func New(rate, sigma float64) (*Mechanism, error) {
	if !(rate > 0 && rate <= 1) {
		return nil, fmt.Errorf("rate must be in (0, 1], got %g", rate)
	}
	if !(sigma > 0) || math.IsInf(sigma, 0) {
		return nil, fmt.Errorf("sigma must be positive and finite, got %g", sigma)
	}
	return &Mechanism{q: rate, sigma: sigma}, nil
}

// RDP returns a sampled Gaussian mechanism as an accounting.RDP curve.
func RDP(rate, sigma float64) (accounting.RDP, error) {
	m, err := New(rate, sigma)
	if err != nil {
		return nil, err
	}
	return m, nil
}

// Rate returns the Poisson sampling rate q.
func (m *Mechanism) Rate() float64 { return m.q }

// Sigma returns the noise multiplier.
func (m *Mechanism) Sigma() float64 { return m.sigma }

// Name returns "sampled-gaussian".
func (m *Mechanism) Name() string { return Name }

// String describes the mechanism and its parameters.
func (m *Mechanism) String() string {
	return fmt.Sprintf("%s(rate=%g, sigma=%g)", Name, m.q, m.sigma)
}

// RDP returns eps(order) = log(A_order)/(order-1) of one invocation
// (Mironov, Talwar, Zhang 2019, Sec. 3), rounded up: never below the exact
// value, never negative, NaN or Inf. Every real order > 1 is supported:
// integers by the binomial sum of Sec. 3.3, others by the two series of
// Sec. 3.4 with a proven remainder bound. The result never exceeds the
// Gaussian mechanism's order/(2 sigma^2) (A_alpha is convex in q with
// derivative 0 at q = 0, hence increasing on [0, 1]); that bound is also
// returned where the sums would overflow (order^2/(2 sigma^2) > 1e300).
// An error wrapping accounting.ErrOrderUnsupported is returned where even
// that overflows, or for orders above MaxOrder.
func (m *Mechanism) RDP(order float64) (float64, error) {
	lm, err := m.LogMoment(order)
	if err != nil {
		return 0, err
	}
	return finite(math.Min(roundUp(lm/(order-1)), roundUp(order/(2*m.sigma*m.sigma))), order)
}

// LogMoment returns an upper bound on log A_order, i.e. (order-1) times the
// RDP at that order, with the same guarantees as RDP.
func (m *Mechanism) LogMoment(order float64) (float64, error) {
	if err := checkOrder(order); err != nil {
		return 0, err
	}
	gauss := roundUp(order * (order - 1) / (2 * m.sigma * m.sigma))
	if m.q == 1 || !(order*order/(2*m.sigma*m.sigma) <= 1e300) {
		return finite(gauss, order)
	}
	lam1, err := m.logAm1(order)
	if err != nil {
		return 0, err
	}
	return finite(math.Min(roundUp(logmath.Log1pExp(lam1)), gauss), order)
}

// logAm1 returns an upper bound on log(A_order - 1) for 0 < q < 1.
func (m *Mechanism) logAm1(order float64) (float64, error) {
	p := newParams(m.q, m.sigma)
	var v float64
	if order == math.Trunc(order) {
		v = p.integerLogAm1(int(order))
	} else {
		v = p.fractionalLogAm1(order)
	}
	if math.IsNaN(v) {
		return 0, fmt.Errorf("%v at order %g: NaN (internal error)", m, order)
	}
	return v, nil
}

func checkOrder(order float64) error {
	if math.IsNaN(order) || math.IsInf(order, 0) || order <= 1 {
		return fmt.Errorf("order must be a finite number > 1, got %g", order)
	}
	if order > MaxOrder {
		return fmt.Errorf("order %g exceeds %d: %w", order, MaxOrder, accounting.ErrOrderUnsupported)
	}
	return nil
}

// finite returns v, or an error wrapping accounting.ErrOrderUnsupported
// when v overflowed: the bound is vacuous there.
func finite(v, order float64) (float64, error) {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("%s at order %g overflows (vacuous): %w", Name, order, accounting.ErrOrderUnsupported)
	}
	if v < 0 {
		return 0, nil
	}
	return v, nil
}

// roundUp nudges a non-negative result up by 8 ulps to cover the rounding
// of the final division and logarithm.
func roundUp(x float64) float64 {
	if x <= 0 {
		return 0
	}
	return x * (1 + 8*eps)
}

// eps is the unit roundoff 2^-52 (one ulp of 1).
const eps = 0x1p-52

// params holds the per-mechanism constants of the sums.
type params struct {
	q, sigma float64
	lq, l1   float64 // log q, log(1-q)
	inv2s2   float64 // 1/(2 sigma^2)
}

func newParams(q, sigma float64) params {
	return params{q: q, sigma: sigma, lq: logmath.Log(q), l1: math.Log1p(-q), inv2s2: 1 / (2 * sigma * sigma)}
}
