package training

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// LRSchedule is a piecewise-constant learning-rate schedule indexed by epoch,
// the schedule {eta_t} of NeurIPS'21 Algorithm 1 as used in its Fig. 5
// (eta = 0.3 for the first 70 epochs, then 0.18).
//
// Epochs are counted from 0: the rate in force during epoch e (the epoch that
// round t belongs to, e = floor(t*k/n)) is the rate of the last breakpoint
// whose start epoch is <= e.
type LRSchedule struct {
	// Starts[i] is the first epoch at which Rates[i] applies; Starts[0] == 0
	// and Starts is strictly increasing.
	Starts []int
	Rates  []float64
}

// ParseLRSchedule parses a schedule such as "0.3" (constant) or
// "0.3,70:0.18" (0.3, then 0.18 from epoch 70) or "12,30:4,60:3.5".
// The first element is the initial rate; every later element is
// EPOCH:RATE with strictly increasing positive epochs. Rates must be
// positive and finite.
func ParseLRSchedule(spec string) (LRSchedule, error) {
	var s LRSchedule
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return s, fmt.Errorf("lr: empty schedule (want e.g. \"0.3\" or \"0.3,70:0.18\")")
	}
	for i, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		start := 0
		rateText := part
		if i == 0 {
			if strings.Contains(part, ":") {
				return LRSchedule{}, fmt.Errorf("lr: first element %q must be a plain rate (the rate from epoch 0)", part)
			}
		} else {
			e, r, ok := strings.Cut(part, ":")
			if !ok {
				return LRSchedule{}, fmt.Errorf("lr: element %q must be EPOCH:RATE", part)
			}
			n, err := strconv.Atoi(strings.TrimSpace(e))
			if err != nil {
				return LRSchedule{}, fmt.Errorf("lr: epoch %q in %q is not an integer", e, part)
			}
			if n <= s.Starts[len(s.Starts)-1] {
				return LRSchedule{}, fmt.Errorf("lr: epochs must be strictly increasing and positive, got %d after %d", n, s.Starts[len(s.Starts)-1])
			}
			start, rateText = n, strings.TrimSpace(r)
		}
		rate, err := strconv.ParseFloat(rateText, 64)
		if err != nil {
			return LRSchedule{}, fmt.Errorf("lr: rate %q is not a number", rateText)
		}
		if !(rate > 0) || math.IsInf(rate, 0) {
			return LRSchedule{}, fmt.Errorf("lr: rate must be positive and finite, got %g", rate)
		}
		s.Starts = append(s.Starts, start)
		s.Rates = append(s.Rates, rate)
	}
	return s, nil
}

// Rate returns the learning rate in force during epoch (counted from 0).
func (s LRSchedule) Rate(epoch int) float64 {
	r := s.Rates[0]
	for i, st := range s.Starts {
		if epoch >= st {
			r = s.Rates[i]
		}
	}
	return r
}

// String formats the schedule in the syntax ParseLRSchedule accepts.
func (s LRSchedule) String() string {
	var b strings.Builder
	for i := range s.Rates {
		if i > 0 {
			fmt.Fprintf(&b, ",%d:", s.Starts[i])
		}
		b.WriteString(strconv.FormatFloat(s.Rates[i], 'g', -1, 64))
	}
	return b.String()
}
