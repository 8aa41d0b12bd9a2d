package sampledgauss

import "testing"

var (
	propRates  = []float64{1e-5, 1e-3, 0.01, 0.05, 0.2, 0.5, 0.8, 0.99, 1}
	propSigmas = []float64{0.3, 0.5, 0.8, 1, 1.5, 3, 10, 40}
	propOrders = []float64{1.05, 1.5, 2, 2.25, 3, 4.5, 8, 12.5, 32, 100, 255.5, 256}
)

// monotoneTol absorbs the rounding slack of two neighbouring upper bounds
// (each within 1e-7 of the exact value, package doc).
const monotoneTol = 2e-7

func rdp(t *testing.T, q, s, o float64) float64 {
	t.Helper()
	m, err := New(q, s)
	if err != nil {
		t.Fatal(err)
	}
	v, err := m.RDP(o)
	if err != nil {
		t.Fatalf("q=%g sigma=%g order=%g: %v", q, s, o, err)
	}
	if !(v >= 0) {
		t.Fatalf("q=%g sigma=%g order=%g: %v", q, s, o, v)
	}
	return v
}

// TestMonotoneInRate: A_alpha is convex in q with zero slope at q = 0, so
// eps is non-decreasing in the sampling rate.
func TestMonotoneInRate(t *testing.T) {
	for _, s := range propSigmas {
		for _, o := range propOrders {
			prev := 0.0
			for _, q := range propRates {
				v := rdp(t, q, s, o)
				if v < prev*(1-monotoneTol) {
					t.Errorf("sigma=%g order=%g: eps(q=%g) = %.12g below the smaller rate's %.12g", s, o, q, v, prev)
				}
				prev = v
			}
		}
	}
}

// TestDecreasingInSigma: more noise, less privacy loss.
func TestDecreasingInSigma(t *testing.T) {
	for _, q := range propRates {
		for _, o := range propOrders {
			prev := 0.0
			for i, s := range propSigmas {
				v := rdp(t, q, s, o)
				if i > 0 && v > prev*(1+monotoneTol) {
					t.Errorf("q=%g order=%g: eps(sigma=%g) = %.12g above the smaller sigma's %.12g", q, o, s, v, prev)
				}
				prev = v
			}
		}
	}
}

// TestNonDecreasingInOrder: Rényi divergences are non-decreasing in the
// order (van Erven and Harremoës 2014, Thm 3).
func TestNonDecreasingInOrder(t *testing.T) {
	for _, q := range propRates {
		for _, s := range propSigmas {
			prev := 0.0
			for _, o := range propOrders {
				v := rdp(t, q, s, o)
				if v < prev*(1-monotoneTol) {
					t.Errorf("q=%g sigma=%g: eps(%g) = %.12g below the smaller order's %.12g", q, s, o, v, prev)
				}
				prev = v
			}
		}
	}
}
