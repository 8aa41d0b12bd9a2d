package sampledgauss

import (
	"errors"
	"math"
	"testing"

	"github.com/shuffledp/shuffledp/accounting"
)

// FuzzRDP: for every valid (rate, sigma, order) RDP is finite and
// non-negative, at most the Gaussian mechanism's order/(2 sigma^2), or an
// error wrapping accounting.ErrOrderUnsupported; invalid parameters are
// refused with an error.
func FuzzRDP(f *testing.F) {
	for _, s := range []struct{ q, sigma, order float64 }{
		{0.01, 1, 2}, {0.01, 1, 1.5}, {1e-7, 0.1, 1.01}, {0.999, 100, 256.1}, {0.5, 50, 1.01},
		{1, 2, 3.5}, {1e-300, 1e-3, 7.5}, {0.3, 1e-140, 2.5}, {0.5, 1e8, 1.0000001}, {0, 1, 2},
	} {
		f.Add(s.q, s.sigma, s.order)
	}
	f.Fuzz(func(t *testing.T, q, sigma, order float64) {
		m, err := New(q, sigma)
		if !(q > 0 && q <= 1) || !(sigma > 0) || math.IsInf(sigma, 0) {
			if err == nil {
				t.Fatalf("New(%g, %g) accepted", q, sigma)
			}
			return
		}
		if err != nil {
			t.Fatalf("New(%g, %g): %v", q, sigma, err)
		}
		if order > 5000 && order <= MaxOrder {
			t.Skip("large orders cost O(order) per call; covered by the unit tests")
		}
		v, err := m.RDP(order)
		if math.IsNaN(order) || math.IsInf(order, 0) || order <= 1 {
			if err == nil {
				t.Fatalf("order %g accepted", order)
			}
			return
		}
		if err != nil {
			if !errors.Is(err, accounting.ErrOrderUnsupported) {
				t.Fatalf("q=%g sigma=%g order=%g: %v", q, sigma, order, err)
			}
			return
		}
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			t.Fatalf("q=%g sigma=%g order=%g: eps = %v", q, sigma, order, v)
		}
		if g := order / (2 * sigma * sigma); v > g*(1+1e-13) {
			t.Fatalf("q=%g sigma=%g order=%g: eps %g above the Gaussian %g", q, sigma, order, v, g)
		}
	})
}
