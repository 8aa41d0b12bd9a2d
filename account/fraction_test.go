package account

import (
	"strings"
	"testing"
)

func TestParseFraction(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want float64
		err  bool
	}{
		{"1e-5", 1e-5, false},
		{"1/60000", 1.0 / 60000, false},
		{" 1 / 4 ", 0.25, false},
		{"0.5", 0.5, false},
		{"1/0", 0, true},
		{"a/2", 0, true},
		{"1/b", 0, true},
		{"", 0, true},
	} {
		got, err := ParseFraction(tc.in)
		if tc.err {
			if err == nil || !strings.Contains(err.Error(), "quotient a/b") {
				t.Errorf("ParseFraction(%q) = %v, %v; want an error naming the form", tc.in, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseFraction(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}
