package sampledgauss

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/shuffledp/shuffledp/accounting"
)

var _ accounting.RDP = (*Mechanism)(nil)

func TestNewErrors(t *testing.T) {
	for _, c := range []struct {
		rate, sigma float64
		param       string
	}{
		{0, 1, "rate"}, {-0.1, 1, "rate"}, {1.5, 1, "rate"}, {math.NaN(), 1, "rate"}, {math.Inf(1), 1, "rate"},
		{0.1, 0, "sigma"}, {0.1, -1, "sigma"}, {0.1, math.NaN(), "sigma"}, {0.1, math.Inf(1), "sigma"},
	} {
		_, err := New(c.rate, c.sigma)
		if err == nil || !strings.HasPrefix(err.Error(), c.param+" ") {
			t.Errorf("New(%g, %g) = %v, want an error naming %s", c.rate, c.sigma, err, c.param)
		}
		if _, err2 := RDP(c.rate, c.sigma); err2 == nil {
			t.Errorf("RDP(%g, %g) accepted", c.rate, c.sigma)
		}
	}
}

func TestOrderErrors(t *testing.T) {
	m, _ := New(0.01, 1)
	for _, o := range []float64{1, 0.5, -2, math.NaN(), math.Inf(1), math.Inf(-1)} {
		if _, err := m.RDP(o); err == nil || !strings.HasPrefix(err.Error(), "order ") {
			t.Errorf("RDP(%g) = %v, want an error naming order", o, err)
		}
	}
	if _, err := m.RDP(MaxOrder + 1); !errors.Is(err, accounting.ErrOrderUnsupported) {
		t.Errorf("RDP(MaxOrder+1) = %v, want ErrOrderUnsupported", err)
	}
}

// TestNoSampling: q = 1 is the Gaussian mechanism, eps = alpha/(2 sigma^2)
// (TF Privacy's test_compute_rdp_no_sampling: q=1, sigma=10, order 20 ->
// 0.1).
func TestNoSampling(t *testing.T) {
	for _, c := range []struct{ sigma, order float64 }{{10, 20}, {1, 2}, {0.5, 1.5}, {3, 255.5}} {
		m, _ := New(1, c.sigma)
		got, err := m.RDP(c.order)
		want := c.order / (2 * c.sigma * c.sigma)
		if err != nil || got < want || got > want*(1+1e-14) {
			t.Errorf("sigma=%g order=%g: %v, %v; want %v", c.sigma, c.order, got, err, want)
		}
	}
}

// TestTFPrivacyValues compares with the values asserted by TF Privacy's
// own tests (tensorflow/privacy,
// tensorflow_privacy/privacy/analysis/rdp_accountant_test.py):
// test_compute_rdp_scalar (q=0.1, sigma=2, 10 steps, order 5: 0.07737 to
// 5 places) and test_compute_rdp_sequence (q=0.01, sigma=2.5, 50 steps,
// orders 1.5, 2.5, 5, 50, 100, to 1e-5).
func TestTFPrivacyValues(t *testing.T) {
	for _, c := range []struct {
		q, sigma, steps, order, want, tol float64
	}{
		{0.1, 2, 10, 5, 0.07737, 5e-6},
		{0.01, 2.5, 50, 1.5, 0.00065, 1e-5},
		{0.01, 2.5, 50, 2.5, 0.001085, 1e-5},
		{0.01, 2.5, 50, 5, 0.00218075, 1e-5},
		{0.01, 2.5, 50, 50, 0.023846, 1e-5},
		{0.01, 2.5, 50, 100, 167.416307, 1e-5},
	} {
		m, _ := New(c.q, c.sigma)
		v, err := m.RDP(c.order)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.steps * v; math.Abs(got-c.want) > c.tol {
			t.Errorf("q=%g sigma=%g steps=%g order=%g: %.8g, TF Privacy %.8g", c.q, c.sigma, c.steps, c.order, got, c.want)
		}
	}
}

// TestIntegerOrdersBothRoutes: at an integer order the two series of
// Sec. 3.4 terminate (C(alpha,k) = 0 for k > alpha) and must agree with the
// binomial sum of Sec. 3.3.
func TestIntegerOrdersBothRoutes(t *testing.T) {
	for _, q := range []float64{1e-4, 0.01, 0.3, 0.5, 0.9} {
		for _, s := range []float64{0.5, 1, 5, 50} {
			for _, o := range []int{2, 3, 7, 32, 100} {
				p := newParams(q, s)
				a, b := p.integerLogAm1(o), p.fractionalLogAm1(float64(o))
				tol := 1e-9 * math.Max(1, math.Abs(a))
				if q == 0.5 && s == 50 {
					tol *= 100 // the series' cancellation (package doc)
				}
				if math.Abs(a-b) > tol {
					t.Errorf("q=%g sigma=%g order=%d: binomial sum log(A-1) %.17g, series %.17g", q, s, o, a, b)
				}
			}
		}
	}
}

// TestContinuityAtIntegers: eps is continuous in the order; the series
// just above and below an integer agree with the binomial sum at it.
func TestContinuityAtIntegers(t *testing.T) {
	for _, c := range []struct{ q, s float64 }{{0.01, 1}, {0.2, 0.7}, {1e-3, 4}} {
		m, _ := New(c.q, c.s)
		for _, o := range []float64{2, 3, 10, 64} {
			at, _ := m.RDP(o)
			below, _ := m.RDP(o - 1e-9)
			above, _ := m.RDP(o + 1e-9)
			if !(below <= at*(1+1e-7) && at <= above*(1+1e-7)) || math.Abs(above-below) > 1e-6*at {
				t.Errorf("q=%g sigma=%g: eps(%g -/+ 1e-9) = %.12g, %.12g, eps(%g) = %.12g", c.q, c.s, o, below, above, o, at)
			}
		}
	}
}

// TestGaussianCap: never above the Gaussian mechanism's alpha/(2 sigma^2),
// which is also the answer where the sums would overflow.
func TestGaussianCap(t *testing.T) {
	for _, s := range []float64{1e-3, 0.1, 1, 20} {
		for _, q := range []float64{0.001, 0.5, 0.999} {
			m, _ := New(q, s)
			for _, o := range []float64{1.5, 2, 16, 255.5} {
				v, err := m.RDP(o)
				if err != nil {
					t.Fatal(err)
				}
				if g := o / (2 * s * s); v > g*(1+1e-14) {
					t.Errorf("q=%g sigma=%g order=%g: %g above the Gaussian %g", q, s, o, v, g)
				}
			}
		}
	}
	// sigma so small that order^2/(2 sigma^2) > 1e300: the Gaussian bound.
	tiny := 1e-150
	m, _ := New(0.5, tiny)
	v, err := m.RDP(2.5)
	if err != nil || v != roundUp(2.5/(2*tiny*tiny)) {
		t.Errorf("sigma=1e-150: %v, %v", v, err)
	}
	m, _ = New(0.5, 1e-160)
	if _, err := m.RDP(2.5); !errors.Is(err, accounting.ErrOrderUnsupported) {
		t.Errorf("sigma=1e-160: %v, want ErrOrderUnsupported (vacuous)", err)
	}
}

// TestAccountantComposes: the curve composes in accounting.Accountant,
// and T steps give T times the per-step RDP.
func TestAccountantComposes(t *testing.T) {
	m, _ := New(256.0/60000, 1.1)
	orders := []float64{1.5, 2, 8, 32}
	acct, err := accounting.NewAccountant(orders)
	if err != nil {
		t.Fatal(err)
	}
	if err := acct.Compose(m, 14040); err != nil {
		t.Fatal(err)
	}
	for i, o := range orders {
		v, _ := m.RDP(o)
		if got := acct.TotalRDP()[i]; math.Abs(got-14040*v) > 1e-12*got {
			t.Errorf("order %g: total %g, want %g", o, got, 14040*v)
		}
	}
	g, err := acct.Epsilon(1e-5)
	if err != nil || !(g.Epsilon > 0) {
		t.Errorf("Epsilon: %+v, %v", g, err)
	}
}
