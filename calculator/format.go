package calculator

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// Digits is the number of significant digits the page prints, as the CLI's
// table does (%.6g).
const Digits = 6

// FormatUpper prints an upper bound x with Digits significant digits,
// rounded up: the printed number is never below x, so a printed guarantee
// is never smaller than the bound it states. "inf" for +Inf.
func FormatUpper(x float64) string { return formatDirected(x, true) }

// FormatLower prints a lower bound x with Digits significant digits,
// rounded down: the printed number is never above x.
func FormatLower(x float64) string { return formatDirected(x, false) }

// FormatKind prints x rounded in the direction that keeps a statement of
// kind true: up for "upper" (a guarantee), down for the lower kinds
// ("certified-lower", "rdp-lower").
func FormatKind(x float64, kind string) string {
	if strings.HasSuffix(kind, "lower") {
		return FormatLower(x)
	}
	return FormatUpper(x)
}

func formatDirected(x float64, up bool) string {
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
	s := strconv.FormatFloat(x, 'e', Digits-1, 64) // nearest, d.ddddde±x
	mant, exp, _ := strings.Cut(s, "e")
	neg := strings.HasPrefix(mant, "-")
	digits, _ := strconv.ParseInt(strings.NewReplacer("-", "", ".", "").Replace(mant), 10, 64)
	e, _ := strconv.Atoi(exp)
	dec, _ := new(big.Rat).SetString(s)
	cmp := dec.Cmp(new(big.Rat).SetFloat64(x)) // exact comparison
	// Step the magnitude one unit in the last place when the nearest
	// decimal lies on the wrong side of x.
	if (up && cmp < 0) || (!up && cmp > 0) {
		if up != neg {
			digits++
		} else {
			digits--
		}
	}
	lo := int64(math.Pow10(Digits - 1))
	switch {
	case digits >= 10*lo:
		digits /= 10
		e++
	case digits < lo:
		digits = digits*10 + 9
		e--
	}
	sign := ""
	if neg {
		sign = "-"
	}
	return sign + gFormat(strconv.FormatInt(digits, 10), e)
}

// gFormat prints the decimal 0.d1d2...dn * 10^(e+1) (digits d, e the
// exponent of its first digit) as %g does: exponent notation when e < -4
// or e >= len(d), else plain, trailing zeros removed.
func gFormat(d string, e int) string {
	d = strings.TrimRight(d, "0")
	if d == "" {
		return "0"
	}
	if e < -4 || e >= Digits {
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
