// Package directed prints bounds as decimals rounded in the direction that
// keeps their statement true: an upper bound (a privacy guarantee) rounded
// up, a lower bound rounded down, so that a printed guarantee is never
// smaller than the bound it states and a printed lower bound never larger.
// Every epsilon the module prints for a person (account's table, calibrate,
// ledger show, train, up, the dashboard, the calculator) goes through it.
package directed

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// Digits is the number of significant digits of the tables (account,
// ledger show, the calculator), as %.6g prints.
const Digits = 6

// Upper prints the upper bound x with digits significant digits (1 to 17),
// rounded up: the printed decimal is never below x (compared exactly), and
// it is %.{digits}g's printing whenever that one is not below x. "inf" for
// +Inf, "NaN" for NaN.
func Upper(x float64, digits int) string { return format(x, digits, true) }

// Lower prints the lower bound x with digits significant digits, rounded
// down: the printed decimal is never above x.
func Lower(x float64, digits int) string { return format(x, digits, false) }

// Kind prints x rounded in the direction that keeps a statement of kind
// true: down for the lower kinds ("certified-lower", "rdp-lower": any kind
// ending in "lower"), up otherwise (a guarantee, kind "upper").
func Kind(x float64, kind string, digits int) string {
	if strings.HasSuffix(kind, "lower") {
		return Lower(x, digits)
	}
	return Upper(x, digits)
}

func format(x float64, digits int, up bool) string {
	digits = min(max(digits, 1), 17)
	switch {
	case math.IsNaN(x):
		return "NaN"
	case math.IsInf(x, 1):
		return "inf"
	case math.IsInf(x, -1):
		return "-inf"
	case x == 0:
		return "0"
	}
	s := strconv.FormatFloat(x, 'e', digits-1, 64) // nearest, d.ddddde±x
	mant, exp, _ := strings.Cut(s, "e")
	neg := strings.HasPrefix(mant, "-")
	d, _ := strconv.ParseInt(strings.NewReplacer("-", "", ".", "").Replace(mant), 10, 64)
	e, _ := strconv.Atoi(exp)
	dec, _ := new(big.Rat).SetString(s)
	cmp := dec.Cmp(new(big.Rat).SetFloat64(x)) // exact comparison
	// Step the magnitude one unit in the last place when the nearest
	// decimal lies on the wrong side of x.
	if (up && cmp < 0) || (!up && cmp > 0) {
		if up != neg {
			d++
		} else {
			d--
		}
	}
	lo := int64(math.Pow10(digits - 1))
	switch {
	case d >= 10*lo:
		d /= 10
		e++
	case d < lo:
		d = d*10 + 9
		e--
	}
	sign := ""
	if neg {
		sign = "-"
	}
	return sign + gFormat(strconv.FormatInt(d, 10), e, digits)
}

// gFormat prints the decimal 0.d1d2...dn * 10^(e+1) (digits d, e the
// exponent of its first digit) as %.{p}g does: exponent notation when
// e < -4 or e >= p, else plain, trailing zeros removed.
func gFormat(d string, e, p int) string {
	d = strings.TrimRight(d, "0")
	if d == "" {
		return "0"
	}
	if e < -4 || e >= p {
		m := d[:1]
		if len(d) > 1 {
			m += "." + d[1:]
		}
		sign := "+"
		if e < 0 {
			sign, e = "-", -e
		}
		return fmt.Sprintf("%se%s%02d", m, sign, e)
	}
	if e < 0 {
		return "0." + strings.Repeat("0", -e-1) + d
	}
	if len(d) <= e+1 {
		return d + strings.Repeat("0", e+1-len(d))
	}
	return d[:e+1] + "." + d[e+1:]
}
