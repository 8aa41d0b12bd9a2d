package pki

import "testing"

// TestParseRange: LO:HI with 0 <= LO < HI is accepted; anything else is
// refused naming the flag.
func TestParseRange(t *testing.T) {
	for _, tc := range []struct {
		s      string
		lo, hi int64
		ok     bool
	}{
		{"0:10", 0, 10, true}, {"5:6", 5, 6, true},
		{"6:6", 0, 0, false}, {"7:6", 0, 0, false}, {"-1:3", 0, 0, false}, {"3", 0, 0, false}, {"a:b", 0, 0, false}, {"", 0, 0, false},
	} {
		lo, hi, err := ParseRange("clients", tc.s)
		if tc.ok != (err == nil) || lo != tc.lo || hi != tc.hi {
			t.Errorf("ParseRange(%q) = %d, %d, %v", tc.s, lo, hi, err)
		}
		if err != nil && err.Error()[:len("clients must be LO:HI")] != "clients must be LO:HI" {
			t.Errorf("ParseRange(%q): %v does not name the flag", tc.s, err)
		}
	}
}
