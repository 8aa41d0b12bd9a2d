package training

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// LRSchedule is a piecewise-constant learning-rate schedule indexed by epoch,
// the schedule {eta_t} of NeurIPS'21 Algorithm 1 as used in its Fig. 3
// (arXiv Fig. 5(a): eta = 0.3 for the first 70 epochs, then 0.18).
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

// Schedule is the learning rate the server steps with (a server.Schedule):
// the piecewise-constant Base (--lr), times a linear warm-up over the first
// Warmup epochs (--lr-warmup), times a decay factor (--lr-decay). At the
// progress e = s*k/n (fractional epochs completed before step s+1, s
// counted from 0)
//
//	eta(e) = Base.Rate(floor(e)) * min(1, (e + k/n) / Warmup) * Decay.Factor(e),
//
// so the warm-up factor is (s+1)/(Warmup*n/k): the first step is not
// wasted and the rate reaches Base at the end of the warm-up. Without
// warm-up and decay eta is Base's rate exactly. The learning rate is
// post-processing of the released batches: no schedule changes the
// privacy guarantee.
type Schedule struct {
	Base   LRSchedule
	Warmup float64 // epochs; 0 = none
	Decay  LRDecay
	// StepEpochs is k/n, the epochs one step advances.
	StepEpochs float64
}

// Rate implements server.Schedule.
func (s Schedule) Rate(epoch float64) float64 {
	r := s.Base.Rate(int(math.Floor(epoch)))
	if s.Warmup > 0 && epoch < s.Warmup {
		r *= min(1, (epoch+s.StepEpochs)/s.Warmup)
	}
	if s.Decay.Kind != DecayNone && s.Decay.Kind != "" {
		r *= s.Decay.Factor(epoch)
	}
	return r
}

// Learning-rate decay kinds (LRDecay.Kind).
const (
	DecayNone   = "none"
	DecayCosine = "cosine"
	DecayStep   = "step"
)

// LRDecay is a multiplicative decay of the learning rate by epoch
// (--lr-decay):
//
//	none                 factor 1
//	cosine:END[:MIN]     MIN + (1-MIN)(1 + cos(pi min(e, END)/END))/2: from 1 at
//	                     epoch 0 to MIN (default 0) at epoch END, MIN after
//	                     (Loshchilov and Hutter, ICLR 2017, without restarts)
//	step:EVERY:GAMMA     GAMMA^floor(floor(e)/EVERY): times GAMMA every EVERY epochs
//
// The horizon END is explicit (not --epochs, which may change when a run
// resumes) so that a resumed run keeps its schedule.
type LRDecay struct {
	Kind  string  // DecayNone ("" too), DecayCosine or DecayStep
	End   float64 // cosine: epoch at which the factor reaches Min (> 0)
	Min   float64 // cosine: final factor, in [0, 1)
	Every int     // step: epochs between decays (>= 1)
	Gamma float64 // step: factor per decay, in (0, 1]
}

// ParseLRDecay parses the --lr-decay syntax of LRDecay.
func ParseLRDecay(spec string) (LRDecay, error) {
	parts := strings.Split(strings.TrimSpace(spec), ":")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	num := func(what, text string) (float64, error) {
		v, err := strconv.ParseFloat(text, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("lr-decay: %s %q in %q is not a finite number", what, text, spec)
		}
		return v, nil
	}
	var d LRDecay
	switch parts[0] {
	case "", DecayNone:
		if len(parts) > 1 {
			return LRDecay{}, fmt.Errorf("lr-decay: none takes no parameters, got %q", spec)
		}
		return LRDecay{Kind: DecayNone}, nil
	case DecayCosine:
		if len(parts) < 2 || len(parts) > 3 {
			return LRDecay{}, fmt.Errorf("lr-decay: want cosine:END[:MIN] (e.g. cosine:200 or cosine:200:0.01), got %q", spec)
		}
		d.Kind = DecayCosine
		var err error
		if d.End, err = num("END", parts[1]); err != nil {
			return LRDecay{}, err
		}
		if len(parts) == 3 {
			if d.Min, err = num("MIN", parts[2]); err != nil {
				return LRDecay{}, err
			}
		}
	case DecayStep:
		if len(parts) != 3 {
			return LRDecay{}, fmt.Errorf("lr-decay: want step:EVERY:GAMMA (e.g. step:50:0.5), got %q", spec)
		}
		d.Kind = DecayStep
		n, err := strconv.Atoi(parts[1])
		if err != nil {
			return LRDecay{}, fmt.Errorf("lr-decay: EVERY %q in %q is not an integer", parts[1], spec)
		}
		d.Every = n
		if d.Gamma, err = num("GAMMA", parts[2]); err != nil {
			return LRDecay{}, err
		}
	default:
		return LRDecay{}, fmt.Errorf("lr-decay must be none, cosine:END[:MIN] or step:EVERY:GAMMA, got %q", spec)
	}
	return d, d.Validate()
}

// Validate checks the decay's parameters; errors name --lr-decay.
func (d LRDecay) Validate() error {
	switch d.Kind {
	case "", DecayNone:
	case DecayCosine:
		if !(d.End > 0) || math.IsInf(d.End, 0) {
			return fmt.Errorf("lr-decay: cosine END must be positive and finite, got %g", d.End)
		}
		if !(d.Min >= 0 && d.Min < 1) {
			return fmt.Errorf("lr-decay: cosine MIN must be in [0, 1), got %g", d.Min)
		}
	case DecayStep:
		if d.Every < 1 {
			return fmt.Errorf("lr-decay: step EVERY must be >= 1, got %d", d.Every)
		}
		if !(d.Gamma > 0 && d.Gamma <= 1) {
			return fmt.Errorf("lr-decay: step GAMMA must be in (0, 1], got %g", d.Gamma)
		}
	default:
		return fmt.Errorf("lr-decay must be none, cosine or step, got %q", d.Kind)
	}
	return nil
}

// Factor returns the decay factor at the progress epoch (fractional).
func (d LRDecay) Factor(epoch float64) float64 {
	switch d.Kind {
	case DecayCosine:
		e := min(max(epoch, 0), d.End)
		return d.Min + (1-d.Min)*(1+math.Cos(math.Pi*e/d.End))/2
	case DecayStep:
		return math.Pow(d.Gamma, float64(int(math.Floor(epoch))/d.Every))
	}
	return 1
}

// String formats the decay in the syntax ParseLRDecay accepts.
func (d LRDecay) String() string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	switch d.Kind {
	case DecayCosine:
		if d.Min != 0 {
			return "cosine:" + f(d.End) + ":" + f(d.Min)
		}
		return "cosine:" + f(d.End)
	case DecayStep:
		return "step:" + strconv.Itoa(d.Every) + ":" + f(d.Gamma)
	}
	return DecayNone
}
