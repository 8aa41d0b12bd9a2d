package calculator

import "github.com/shuffledp/shuffledp/internal/directed"

// Digits is the number of significant digits the page prints, as the CLI's
// table does (directed.Digits).
const Digits = directed.Digits

// FormatUpper prints an upper bound x with Digits significant digits,
// rounded up (directed.Upper, as every table of the CLI): the printed
// number is never below x, so a printed guarantee is never smaller than
// the bound it states. "inf" for +Inf.
func FormatUpper(x float64) string { return directed.Upper(x, Digits) }

// FormatLower prints a lower bound x with Digits significant digits,
// rounded down (directed.Lower): the printed number is never above x.
func FormatLower(x float64) string { return directed.Lower(x, Digits) }

// FormatKind prints x rounded in the direction that keeps a statement of
// kind true: up for "upper" (a guarantee), down for the lower kinds
// ("certified-lower", "rdp-lower").
func FormatKind(x float64, kind string) string { return directed.Kind(x, kind, Digits) }
