package calculator

import (
	"math"
	"testing"
)

// TestFormatDirected: the page prints as the CLI's tables do (package
// directed, whose own tests check the rounding's direction exhaustively).
func TestFormatDirected(t *testing.T) {
	for _, tc := range []struct {
		x            float64
		upper, lower string
	}{
		{0, "0", "0"},
		{0.1, "0.100001", "0.1"},
		{0.20817309819841373, "0.208174", "0.208173"},
		{2.5e-300, "2.5e-300", "2.49999e-300"},
		{math.Inf(1), "inf", "inf"},
	} {
		if got := FormatUpper(tc.x); got != tc.upper {
			t.Errorf("FormatUpper(%v) = %s, want %s", tc.x, got, tc.upper)
		}
		if got := FormatLower(tc.x); got != tc.lower {
			t.Errorf("FormatLower(%v) = %s, want %s", tc.x, got, tc.lower)
		}
		if got := FormatKind(tc.x, "certified-lower"); got != tc.lower {
			t.Errorf("FormatKind(%v, certified-lower) = %s, want %s", tc.x, got, tc.lower)
		}
	}
}
