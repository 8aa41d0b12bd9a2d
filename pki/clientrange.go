package pki

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseRange parses a range of client indices LO:HI (0 <= LO < HI: clients
// LO..HI-1), as pki enrol and the client process take it; errors name the
// flag.
func ParseRange(flag, s string) (lo, hi int64, err error) {
	a, b, ok := strings.Cut(s, ":")
	if ok {
		lo, err = strconv.ParseInt(a, 10, 64)
		if err == nil {
			hi, err = strconv.ParseInt(b, 10, 64)
		}
	}
	if !ok || err != nil || lo < 0 || hi <= lo {
		return 0, 0, fmt.Errorf("%s must be LO:HI with 0 <= LO < HI, got %q", flag, s)
	}
	return lo, hi, nil
}
