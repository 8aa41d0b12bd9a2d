package sampledgauss

import (
	"encoding/json"
	"math"
	"os"
	"testing"
)

// TestNormalHelpers compares logHalfErfcx and logNormCDF with 40-digit
// mpmath values (testdata/gen_normal.py), across the switch to the
// continued fraction at w = 4, the underflow of erfc near 27, and
// arguments up to 1e8.
func TestNormalHelpers(t *testing.T) {
	b, err := os.ReadFile("testdata/normal.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Erfcx []struct {
			W float64 `json:"w"`
			V string  `json:"v"`
		} `json:"log_half_erfcx"`
		CDF []struct {
			X float64 `json:"x"`
			V string  `json:"v"`
		} `json:"log_norm_cdf"`
	}
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	if len(ref.Erfcx) < 10 || len(ref.CDF) < 10 {
		t.Fatal("normal.json is incomplete")
	}
	// The documented errors: a few ulps times (1 + w^2) below w = 4, a few
	// ulps above; log Phi within a few ulps of (1 + x^2/2).
	for _, c := range ref.Erfcx {
		want := parse(t, c.V)
		got := logHalfErfcx(c.W)
		tol := 8 * eps * (1 + math.Min(c.W*c.W, 16)) * math.Max(1, math.Abs(want))
		if math.Abs(got-want) > tol {
			t.Errorf("logHalfErfcx(%g) = %.17g, want %.17g (diff %.3g > %.3g)", c.W, got, want, got-want, tol)
		}
	}
	for _, c := range ref.CDF {
		want := parse(t, c.V)
		got := logNormCDF(c.X)
		// For x >= 0 the value is about -Phi(-x), to a relative accuracy of
		// a few ulps times x^2 (the rounding of x/sqrt 2 inside erfc); for
		// x < 0 its absolute error is a few ulps of its components' size.
		tol := 8 * eps * (1 + c.X*c.X) * (math.Abs(want) + 1e-300)
		if c.X < 0 {
			tol = 8 * eps * (1 + c.X*c.X/2 + math.Abs(want))
		}
		if math.Abs(got-want) > tol {
			t.Errorf("logNormCDF(%g) = %.17g, want %.17g (diff %.3g > %.3g)", c.X, got, want, got-want, tol)
		}
	}
}
