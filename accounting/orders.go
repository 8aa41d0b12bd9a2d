package accounting

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// DefaultOrders returns the default grid of Rényi orders: fractional orders
// below 10 (used only by bounds valid there), every integer from 2 to 256,
// and then 384, 512, 768, ..., 4096 (powers of two and the points halfway
// between them on a log scale, rounded to integers), so that optima at the
// large orders reached by large populations are found.
func DefaultOrders() []float64 {
	var o []float64
	for _, f := range []float64{1.1, 1.25, 1.5, 1.75} {
		o = append(o, f)
	}
	for x := 2.0; x < 10; x += 0.25 {
		o = append(o, x)
	}
	for i := 10; i <= 256; i++ {
		o = append(o, float64(i))
	}
	for p := 512; p <= 4096; p *= 2 {
		o = append(o, float64(p*3/4), float64(p))
	}
	return o
}

// ParseOrders parses an order specification: "lo:hi" for every integer from
// lo to hi, or a comma-separated list of orders; "" gives DefaultOrders.
// Every order must be a finite number > 1. The result is sorted and has no
// duplicates.
func ParseOrders(spec string) ([]float64, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" || spec == "default" {
		return DefaultOrders(), nil
	}
	var out []float64
	if lo, hi, ok := strings.Cut(spec, ":"); ok {
		a, err1 := strconv.Atoi(strings.TrimSpace(lo))
		b, err2 := strconv.Atoi(strings.TrimSpace(hi))
		if err1 != nil || err2 != nil || a < 2 || b < a || b > 1<<20 {
			return nil, fmt.Errorf("orders: range %q must be lo:hi with integers 2 <= lo <= hi <= %d", spec, 1<<20)
		}
		for i := a; i <= b; i++ {
			out = append(out, float64(i))
		}
		return out, nil
	}
	for _, f := range strings.Split(spec, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v <= 1 {
			return nil, fmt.Errorf("orders: %q is not a finite number > 1", strings.TrimSpace(f))
		}
		out = append(out, v)
	}
	sort.Float64s(out)
	uniq := out[:0]
	for i, v := range out {
		if i == 0 || v != out[i-1] {
			uniq = append(uniq, v)
		}
	}
	return uniq, nil
}
