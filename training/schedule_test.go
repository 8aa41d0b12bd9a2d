package training

import (
	"math"
	"strings"
	"testing"
)

func TestParseLRSchedule(t *testing.T) {
	tests := []struct {
		spec  string
		rates map[int]float64 // epoch -> expected rate
		str   string
	}{
		{"0.3", map[int]float64{0: 0.3, 1: 0.3, 1000: 0.3}, "0.3"},
		{"0.3,70:0.18", map[int]float64{0: 0.3, 69: 0.3, 70: 0.18, 199: 0.18}, "0.3,70:0.18"},
		{"12,30:4,60:3.5", map[int]float64{0: 12, 29: 12, 30: 4, 59: 4, 60: 3.5, 500: 3.5}, "12,30:4,60:3.5"},
		{" 1e-2 , 5 : 2e-3 ", map[int]float64{4: 0.01, 5: 0.002}, "0.01,5:0.002"},
	}
	for _, tc := range tests {
		s, err := ParseLRSchedule(tc.spec)
		if err != nil {
			t.Fatalf("ParseLRSchedule(%q): %v", tc.spec, err)
		}
		for e, want := range tc.rates {
			if got := s.Rate(e); got != want {
				t.Errorf("ParseLRSchedule(%q).Rate(%d) = %g, want %g", tc.spec, e, got, want)
			}
		}
		if got := s.String(); got != tc.str {
			t.Errorf("ParseLRSchedule(%q).String() = %q, want %q", tc.spec, got, tc.str)
		}
		back, err := ParseLRSchedule(s.String())
		if err != nil || back.String() != s.String() {
			t.Errorf("round trip of %q failed: %v %q", tc.spec, err, back.String())
		}
	}
}

func TestParseLRScheduleRejects(t *testing.T) {
	bad := []string{
		"", "   ", "abc", "0", "-0.1", "inf", "NaN", "0.3,", "0.3,70", "0.3,70:", "0.3,x:0.1",
		"0.3,70:0", "0.3,70:-1", "0.3,0:0.1", "0.3,-5:0.1", "0.3,70:0.18,70:0.1",
		"0.3,70:0.18,60:0.1", "70:0.3", "0.3,1.5:0.1", "0.3;70:0.18",
	}
	for _, spec := range bad {
		if _, err := ParseLRSchedule(spec); err == nil {
			t.Errorf("ParseLRSchedule(%q) accepted an invalid schedule", spec)
		} else if !strings.HasPrefix(err.Error(), "lr:") {
			t.Errorf("ParseLRSchedule(%q) error %q does not name the lr parameter", spec, err)
		}
	}
}

// FuzzParseLRSchedule: the parser never panics; whatever it accepts has a
// positive finite rate everywhere, strictly increasing starts from 0, and
// round-trips through String.
func FuzzParseLRSchedule(f *testing.F) {
	for _, s := range []string{"0.3", "0.3,70:0.18", "12,30:4,60:3.5", "", "1,2", "1,0:1", "1e308,1:1e-308", "NaN", "1,9999999999999999999:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		s, err := ParseLRSchedule(spec)
		if err != nil {
			return
		}
		if len(s.Starts) == 0 || len(s.Starts) != len(s.Rates) || s.Starts[0] != 0 {
			t.Fatalf("%q: malformed schedule %+v", spec, s)
		}
		for i, r := range s.Rates {
			if !(r > 0) || math.IsInf(r, 0) {
				t.Fatalf("%q: rate %g", spec, r)
			}
			if i > 0 && s.Starts[i] <= s.Starts[i-1] {
				t.Fatalf("%q: starts not increasing: %v", spec, s.Starts)
			}
			if got := s.Rate(s.Starts[i]); got != r {
				t.Fatalf("%q: Rate(%d) = %g, want %g", spec, s.Starts[i], got, r)
			}
		}
		back, err := ParseLRSchedule(s.String())
		if err != nil || back.String() != s.String() {
			t.Fatalf("%q: round trip via %q failed: %v", spec, s.String(), err)
		}
	})
}
