package training

import (
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
