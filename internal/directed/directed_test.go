package directed

import (
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"testing"
)

func TestDirected(t *testing.T) {
	for _, tc := range []struct {
		x            float64
		digits       int
		upper, lower string
	}{
		{0, 6, "0", "0"},
		{1, 6, "1", "1"},
		{0.5, 6, "0.5", "0.5"},
		{0.1, 6, "0.100001", "0.1"}, // the float64 0.1 is 0.1000000000000000055511...: above the decimal 0.1
		{1.0000001, 6, "1.00001", "1"},
		{0.99999999, 6, "1", "0.999999"},
		{0.20817309819841373, 6, "0.208174", "0.208173"},
		{0.2081731, 6, "0.208174", "0.208173"}, // %.6g prints 0.208173, below the bound
		{123456.5, 6, "123457", "123456"},
		{2.5e-300, 6, "2.5e-300", "2.49999e-300"}, // the float64 is below the decimal
		{1e-5, 6, "1.00001e-05", "1e-05"},
		{0.0001, 6, "0.000100001", "0.0001"},
		{5e-324, 6, "4.94066e-324", "4.94065e-324"},
		{1.7976931348623157e308, 6, "1.7977e+308", "1.79769e+308"},
		{1e21, 6, "1e+21", "1e+21"},
		{math.Inf(1), 6, "inf", "inf"},
		{1.29401, 4, "1.295", "1.294"}, // %.4g: 1.294
		{0.63449, 4, "0.6345", "0.6344"},
		{2.99993, 4, "3", "2.999"},
		{12345.6, 4, "1.235e+04", "1.234e+04"},
		{2.999930001, 10, "2.999930002", "2.999930001"},
	} {
		if got := Upper(tc.x, tc.digits); got != tc.upper {
			t.Errorf("Upper(%v, %d) = %s, want %s", tc.x, tc.digits, got, tc.upper)
		}
		if got := Lower(tc.x, tc.digits); got != tc.lower {
			t.Errorf("Lower(%v, %d) = %s, want %s", tc.x, tc.digits, got, tc.lower)
		}
	}
	if Kind(0.2081731, "upper", 6) != "0.208174" || Kind(0.2081731, "certified-lower", 6) != "0.208173" || Kind(0.2081731, "rdp-lower", 6) != "0.208173" {
		t.Error("Kind does not round upper kinds up and lower kinds down")
	}
}

// check checks the properties of Upper and Lower at x: the printed decimal
// lies on the stated side of x (exactly, in rationals), within one unit of
// the last significant digit, and equals the nearest printing (%.{digits}g)
// when that already lies on the right side.
func check(t *testing.T, x float64, digits int) {
	t.Helper()
	xr := new(big.Rat).SetFloat64(x)
	nearest := strconv.FormatFloat(x, 'g', digits, 64)
	nr, _ := new(big.Rat).SetString(nearest)
	for _, up := range []bool{true, false} {
		s := format(x, digits, up)
		r, ok := new(big.Rat).SetString(s)
		if !ok {
			t.Fatalf("format(%v, %d, %v) = %q: not a number", x, digits, up, s)
		}
		c := r.Cmp(xr)
		if (up && c < 0) || (!up && c > 0) {
			t.Errorf("format(%v, %d, up=%v) = %s is on the wrong side", x, digits, up, s)
		}
		if d, _ := new(big.Rat).Sub(r, xr).Float64(); math.Abs(d) > 1.0001*math.Pow10(1-digits)*math.Abs(x) {
			t.Errorf("format(%v, %d, up=%v) = %s: %g away, more than one unit of the last digit", x, digits, up, s, d)
		}
		nc := nr.Cmp(xr)
		if ((up && nc >= 0) || (!up && nc <= 0)) && s != nearest {
			t.Errorf("format(%v, %d, up=%v) = %s, want the nearest printing %s (already on the right side)", x, digits, up, s, nearest)
		}
	}
}

func TestDirectedProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, digits := range []int{4, 6, 10} {
		scale := math.Pow10(digits - 1)
		for range 10000 {
			x := math.Exp(rng.Float64()*80 - 40)
			check(t, x, digits)
			// Decimals with the digits printed and their float neighbours.
			e := math.Floor(math.Log10(x))
			d := math.Round(x/math.Pow10(int(e))*scale) / scale * math.Pow10(int(e))
			if d > 0 {
				check(t, d, digits)
				check(t, math.Nextafter(d, 0), digits)
				check(t, math.Nextafter(d, math.Inf(1)), digits)
			}
		}
	}
}

func FuzzDirected(f *testing.F) {
	for _, x := range []float64{1, 0.1, 9.999995, 0.20817309819841373, 1e-300, 5e-324, 1.7976931348623157e308} {
		f.Add(x, uint8(6))
	}
	f.Fuzz(func(t *testing.T, x float64, digits uint8) {
		if math.IsNaN(x) || math.IsInf(x, 0) || x <= 0 || digits < 1 || digits > 15 {
			return
		}
		check(t, x, int(digits))
	})
}
