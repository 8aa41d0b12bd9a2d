package approxdp

import (
	"math"
	"testing"
)

// TestGaussianDeltaMatchesTheClassicalBound: the analytic Gaussian's delta0
// at eps0 is below the classical sufficient condition's (Dwork-Roth Thm
// A.1: sigma >= sqrt(2 log(1.25/delta))/eps0 for eps0 < 1), and
// GaussianEps0 inverts GaussianDelta.
func TestGaussianDeltaMatchesTheClassicalBound(t *testing.T) {
	for _, tc := range []struct{ sigma, eps0 float64 }{{5, 0.5}, {9.48, 0.5}, {2, 0.9}, {20, 0.3}} {
		d, err := GaussianDelta(tc.sigma, tc.eps0)
		if err != nil {
			t.Fatal(err)
		}
		// Dwork-Roth: delta = 1.25 exp(-(sigma eps0)^2/2) suffices.
		if classical := 1.25 * math.Exp(-tc.sigma*tc.sigma*tc.eps0*tc.eps0/2); !(d > 0 && d <= classical) {
			t.Errorf("sigma %g eps0 %g: delta0 %g, classical %g", tc.sigma, tc.eps0, d, classical)
		}
		e, err := GaussianEps0(tc.sigma, d)
		if err != nil || math.Abs(e-tc.eps0) > 1e-6*tc.eps0 {
			t.Errorf("GaussianEps0(%g, %g) = %g (%v), want %g", tc.sigma, d, e, err, tc.eps0)
		}
	}
	// The ICLR'23 submission (Sec. 5.1) calls sigma 9.48 (1, 1/n)-LDP for
	// n = 60000: the classical bound with the LDP sensitivity 2 (any two
	// inputs of the unit ball); the analytic delta0 is smaller.
	if d, _ := GaussianDelta(9.48/2, 1); !(d > 0 && d <= 1.0/60000) {
		t.Errorf("sigma 9.48, sensitivity 2, eps0 1: delta0 %g, want <= 1/60000", d)
	}
}

// TestCheckInGaussianKOV15: the approximate-DP route gives a finite epsilon
// within delta, grows with the rounds, and never beats the same rounds
// without any amplification (eps0 composed by KOV15 at the same delta0).
func TestCheckInGaussianKOV15(t *testing.T) {
	prev := 0.0
	for _, steps := range []int64{1, 100, 2000} {
		c, err := CheckInGaussianKOV15(6000, 0.1, 5, steps, 1e-5)
		if err != nil {
			t.Fatal(err)
		}
		if !(c.Epsilon > prev) || c.Delta > 1e-5 || c.Eps0 <= 0 || c.Reports < 450 {
			t.Fatalf("steps %d: %+v", steps, c)
		}
		bare, err := KOV15Epsilon(c.Eps0, steps, c.DeltaTilde)
		if err != nil || c.Epsilon > bare {
			t.Errorf("steps %d: epsilon %g above the unamplified %g (%v)", steps, c.Epsilon, bare, err)
		}
		prev = c.Epsilon
	}
	for _, bad := range []struct {
		n            int64
		gamma, sigma float64
	}{{0, 0.1, 5}, {100, 0, 5}, {100, 1.5, 5}, {100, 0.1, 0}} {
		if _, err := CheckInGaussianKOV15(bad.n, bad.gamma, bad.sigma, 10, 1e-5); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}
