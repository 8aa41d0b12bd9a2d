package calculator

import (
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"testing"
)

func TestFormatDirected(t *testing.T) {
	for _, tc := range []struct {
		x            float64
		upper, lower string
	}{
		{0, "0", "0"},
		{1, "1", "1"},
		{0.5, "0.5", "0.5"},
		{0.1, "0.100001", "0.1"}, // the float64 0.1 is 0.1000000000000000055511...: above the decimal 0.1
		{1.0000001, "1.00001", "1"},
		{0.99999999, "1", "0.999999"},
		{0.20817309819841373, "0.208174", "0.208173"},
		{123456.5, "123457", "123456"},
		{2.5e-300, "2.5e-300", "2.49999e-300"}, // the float64 is below the decimal
		{1e-5, "1.00001e-05", "1e-05"},
		{0.0001, "0.000100001", "0.0001"}, // above the decimal, as 0.1
		{5e-324, "4.94066e-324", "4.94065e-324"},
		{1.7976931348623157e308, "1.7977e+308", "1.79769e+308"},
		{1e21, "1e+21", "1e+21"},
		{math.Inf(1), "inf", "inf"},
	} {
		if got := FormatUpper(tc.x); got != tc.upper {
			t.Errorf("FormatUpper(%v) = %s, want %s", tc.x, got, tc.upper)
		}
		if got := FormatLower(tc.x); got != tc.lower {
			t.Errorf("FormatLower(%v) = %s, want %s", tc.x, got, tc.lower)
		}
	}
}

// checkDirected checks the properties of FormatUpper and FormatLower at x:
// the printed decimal lies on the stated side of x (exactly, in rationals),
// within one unit of the sixth significant digit, and equals the nearest
// printing (%.6g) when that already lies on the right side.
func checkDirected(t *testing.T, x float64) {
	t.Helper()
	xr := new(big.Rat).SetFloat64(x)
	nearest := strconv.FormatFloat(x, 'g', Digits, 64)
	nr, _ := new(big.Rat).SetString(nearest)
	for _, up := range []bool{true, false} {
		s := formatDirected(x, up)
		r, ok := new(big.Rat).SetString(s)
		if !ok {
			t.Fatalf("formatDirected(%v, %v) = %q: not a number", x, up, s)
		}
		c := r.Cmp(xr)
		if (up && c < 0) || (!up && c > 0) {
			t.Errorf("formatDirected(%v, up=%v) = %s is on the wrong side", x, up, s)
		}
		if d, _ := new(big.Rat).Sub(r, xr).Float64(); math.Abs(d) > 1.0001e-5*math.Abs(x) {
			t.Errorf("formatDirected(%v, up=%v) = %s: %g away, more than one unit of the 6th digit", x, up, s, d)
		}
		nc := nr.Cmp(xr)
		if ((up && nc >= 0) || (!up && nc <= 0)) && s != nearest {
			t.Errorf("formatDirected(%v, up=%v) = %s, want the nearest printing %s (already on the right side)", x, up, s, nearest)
		}
	}
}

func TestFormatDirectedProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		x := math.Exp(rng.Float64()*80 - 40)
		checkDirected(t, x)
		// Decimals with six digits and their float neighbours.
		d := math.Round(x*1e5) / 1e5
		if d > 0 {
			checkDirected(t, d)
			checkDirected(t, math.Nextafter(d, 0))
			checkDirected(t, math.Nextafter(d, math.Inf(1)))
		}
	}
}

func FuzzFormatDirected(f *testing.F) {
	for _, x := range []float64{1, 0.1, 9.999995, 0.20817309819841373, 1e-300, 5e-324, 1.7976931348623157e308} {
		f.Add(x)
	}
	f.Fuzz(func(t *testing.T, x float64) {
		if math.IsNaN(x) || math.IsInf(x, 0) || x <= 0 {
			return
		}
		checkDirected(t, x)
	})
}
