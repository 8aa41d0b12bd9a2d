package calibrate

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// Param names the parameter of a privacy mechanism that a calibration
// solves for: the noise multiplier, the number of steps, the local
// epsilon, the number of clients sampled per round, or the sampling
// (check-in) rate. Epsilon is non-increasing in Sigma and non-decreasing in
// the others.
type Param string

// The parameters Solve can solve for (the values of `shuffledp calibrate
// --solve`).
const (
	Sigma Param = "sigma"
	Steps Param = "steps"
	Eps0  Param = "eps0"
	K     Param = "k"
	Rate  Param = "rate"
)

// Params lists every Param, in the order errors name them.
func Params() []Param { return []Param{Sigma, Steps, Eps0, K, Rate} }

// Integer reports whether the parameter is an integer (Steps, K).
func (p Param) Integer() bool { return p == Steps || p == K }

// Check refuses a name that is no Param, naming the flag --solve.
func (p Param) Check() error {
	for _, q := range Params() {
		if p == q {
			return nil
		}
	}
	names := make([]string, 0, 5)
	for _, q := range Params() {
		names = append(names, string(q))
	}
	return fmt.Errorf("--solve must be one of %s, got %q", strings.Join(names, ", "), string(p))
}

// Search ranges of the parameters, and the decimal digits a continuous
// answer is rounded to (in the conservative direction, then re-evaluated).
const (
	SigmaMin    = 0.01
	SigmaMax    = 1e4
	Eps0Min     = 1e-9
	Eps0Max     = 64
	RateMin     = 1e-9
	StepsMax    = 1 << 40
	SearchTol   = 1e-7
	SearchDigit = 7
)

// Search finds the best value of p at which eps meets target (the
// smallest sigma, the largest of the others) over p's search range,
// rounded on the feasible side: sigma bracketed within a factor 2 from 1
// (BracketDecreasing) then SmallestFeasible; eps0 and rate by
// LargestFeasible, rounded to SearchDigit digits (RoundSafe); steps and k
// by LargestFeasibleInt over [1, StepsMax] and [1, n]. hi is the end of
// the integer range (0 for continuous parameters).
func Search(p Param, target float64, n int64, eps EpsilonFunc) (value float64, evals int, hi int64, err error) {
	switch p {
	case Sigma:
		// Bracket within a factor 2 first (from sigma = 1, halving or
		// doubling): Illinois then needs far fewer steps than from the
		// whole range, where epsilon spans many decades.
		lo, up, pre, err := BracketDecreasing(eps, target, 1, SigmaMin, SigmaMax)
		if err != nil {
			return 0, pre, 0, err
		}
		r, err := SmallestFeasible(eps, target, lo, up, up, SearchTol)
		if err != nil {
			return r.Value, pre + r.Evaluations, 0, err
		}
		return RoundSafe(r.Value, SearchDigit, true, target, eps), pre + r.Evaluations, 0, nil
	case Eps0, Rate:
		min, start, max := Eps0Min, 1.0, float64(Eps0Max)
		if p == Rate {
			min, start, max = RateMin, 0.5, 1
		}
		r, err := LargestFeasible(eps, target, min, start, max, SearchTol)
		if err != nil {
			return r.Value, r.Evaluations, 0, err
		}
		return RoundSafe(r.Value, SearchDigit, false, target, eps), r.Evaluations, 0, nil
	case K, Steps:
		hi = StepsMax
		if p == K {
			hi = n
		}
		r, err := LargestFeasibleInt(func(x int64) (float64, error) { return eps(float64(x)) }, target, 1, hi)
		return float64(r.Value), r.Evaluations, hi, err
	}
	return 0, 0, 0, p.Check()
}

// Edge notes a value at the edge of p's search range ("" if it is not).
func (p Param) Edge(value float64) string {
	switch {
	case p == Sigma && value == SigmaMin:
		return fmt.Sprintf("search floor sigma = %g reached: a smaller sigma may meet the target too", SigmaMin)
	case p == Eps0 && value == Eps0Max:
		return fmt.Sprintf("search ceiling eps0 = %g reached: a larger eps0 may meet the target too", float64(Eps0Max))
	case p == Rate && value == 1:
		return "rate = 1 (every client checks in) meets the target"
	case p == Steps && value == StepsMax:
		return fmt.Sprintf("search ceiling steps = %d reached: more steps may meet the target too", int64(StepsMax))
	}
	return ""
}

// Problem is a two-stage calibration: the answer under Cheap (a fast
// epsilon that is never below the one the answer is judged by), then,
// when Refine is set, moved as far as Refine allows (see RefineBeyond).
type Problem struct {
	Param  Param
	Target float64
	// N is the end of K's range (the population).
	N int64
	// Cheap is the first stage's epsilon.
	Cheap EpsilonFunc
	// Refine, if set, is the expensive route (the PLD accountant) that the
	// answer is refined against beyond Cheap's answer: the answer's
	// epsilon is then min(Cheap, Refine).
	Refine EpsilonFunc
}

// Solution is the answer of Solve.
type Solution struct {
	Value float64
	// Evaluations counts the evaluations of both stages.
	Evaluations int
	// Next is the epsilon at Value+1 for integer parameters when it is
	// known (> Target unless Value is the end of the range).
	Next *float64
	// CheapValue is the first stage's answer, set when Refine was.
	CheapValue *float64
}

// Solve solves pr: Search under Cheap, then RefineBeyond under Refine.
// Errors name the flags of `shuffledp calibrate` (--epsilon, --solve).
func Solve(pr Problem) (Solution, error) {
	p := pr.Param
	value, evals, hi, err := Search(p, pr.Target, pr.N, pr.Cheap)
	if err != nil {
		if errors.Is(err, ErrUnreachable) {
			return Solution{}, fmt.Errorf("--epsilon %g is unreachable by varying --%s: %w", pr.Target, p, err)
		}
		return Solution{}, fmt.Errorf("calibrating --%s: %w", p, err)
	}
	s := Solution{Value: value, Evaluations: evals}
	if pr.Refine == nil {
		if p.Integer() && int64(value) < hi {
			if e, err := pr.Cheap(value + 1); err == nil {
				s.Next = &e
			}
		}
		return s, nil
	}
	cheap := value
	s.CheapValue = &cheap
	r, err := RefineBeyond(p, value, hi, pr.Target, pr.Refine)
	s.Evaluations += r.Evaluations
	if err != nil {
		return Solution{}, fmt.Errorf("calibrating --%s against the PLD route: %w", p, err)
	}
	s.Value = r.Value
	if r.Next > 0 {
		// The answer's epsilon at value+1 is the smaller of the refining
		// route's there and the cheap one's (evaluated now).
		next := r.NextEpsilon
		if e, err := pr.Cheap(r.Next); err == nil && e < next {
			next = e
		}
		s.Next = &next
	}
	return s, nil
}

// Tolerances of the refining stage: an evaluation of the PLD route costs
// 0.05 to 2 s, so the refinement stops at a relative 1e-4 (continuous
// parameters, then rounded to 5 significant digits in the safe direction;
// integers once the infeasible end is within 1e-4 of the feasible one)
// instead of the first stage's 1e-7: about 6 to 12 evaluations.
const (
	RefineTol   = 1e-4
	RefineDigit = 5
	RefineGrow  = 1.25
)

// Refined is the answer of RefineBeyond.
type Refined struct {
	Value float64
	// Next is the infeasible integer Value+1 when the search evaluated it
	// (0 otherwise), and NextEpsilon its epsilon.
	Next, NextEpsilon float64
	// Evaluations counts the evaluations of the refining route.
	Evaluations int
}

// RefineBeyond moves the answer v0 of a cheap route (feasible under it,
// hence under the minimum with any other route) towards the
// epsilon-spending side as far as the route eps allows. Beyond v0 the
// cheap route exceeds the target, so the minimum meets it exactly where eps
// does: the search evaluates eps alone, first at the smallest move it
// resolves (when eps does not meet the target there either, v0 is the
// answer at the cost of one evaluation), then from there (sigma divided by
// RefineGrow, eps0 or rate multiplied by it, steps or k grown by v0/4,
// repeatedly, until infeasible), then narrows the bracket (Illinois for
// sigma, eps0 and rate; integer bisection for steps and k) and rounds in
// the safe direction. Every value it returns was evaluated feasible, so
// the answer never spends more than the target whatever the accuracy of
// the search. intHi is the end of the integer range (steps, k).
func RefineBeyond(p Param, v0 float64, intHi int64, target float64, eps EpsilonFunc) (Refined, error) {
	memo := map[float64]float64{}
	var out Refined
	f := func(x float64) (float64, error) {
		if v, ok := memo[x]; ok {
			return v, nil
		}
		out.Evaluations++
		v, err := eps(x)
		if err != nil {
			return 0, err
		}
		memo[x] = v
		return v, nil
	}
	good, bad, done, err := refineBracket(p, v0, intHi, target, f, &out)
	if err != nil || done {
		return out, err
	}
	if !p.Integer() {
		var r Result
		if p == Sigma {
			r, err = SmallestFeasible(f, target, bad, good, good, RefineTol)
		} else {
			r, err = LargestFeasible(f, target, good, good, bad, RefineTol)
		}
		if err != nil {
			return out, err
		}
		// r.Value is good or a value evaluated feasible; its rounding is
		// kept only where it still improves on v0.
		v := RoundSafe(r.Value, RefineDigit, p == Sigma, target, f)
		if p == Sigma && v > v0 || p != Sigma && v < v0 {
			v = r.Value
		}
		out.Value = v
		return out, nil
	}
	for bad-good > math.Max(1, math.Floor(good*RefineTol)) {
		x := good + math.Floor((bad-good)/2)
		e, err := f(x)
		if err != nil {
			return out, err
		}
		if e <= target {
			good = x
		} else {
			bad = x
		}
	}
	out.Value = good
	if bad == good+1 {
		out.Next, out.NextEpsilon = bad, memo[bad]
	}
	return out, nil
}

// refineBracket is RefineBeyond's first phase: the smallest move from v0,
// then growth until infeasible. It returns the bracket [good, bad], or
// done when out holds the answer already.
func refineBracket(p Param, v0 float64, intHi int64, target float64, f EpsilonFunc, out *Refined) (good, bad float64, done bool, err error) {
	var nudge float64
	switch p {
	case Sigma:
		nudge = math.Max(v0*(1-RefineTol), SigmaMin)
	case Eps0:
		nudge = math.Min(v0*(1+RefineTol), Eps0Max)
	case Rate:
		nudge = math.Min(v0*(1+RefineTol), 1)
	default:
		nudge = math.Min(v0+1, float64(intHi))
	}
	good = v0
	if nudge != v0 {
		e, err := f(nudge)
		if err != nil {
			return 0, 0, false, err
		}
		if e > target {
			out.Value = v0
			if p.Integer() {
				out.Next, out.NextEpsilon = nudge, e
			}
			return 0, 0, true, nil
		}
		good = nudge
	}
	for {
		var x float64
		switch p {
		case Sigma:
			x = math.Max(good/RefineGrow, SigmaMin)
		case Eps0:
			x = math.Min(good*RefineGrow, Eps0Max)
		case Rate:
			x = math.Min(good*RefineGrow, 1)
		default:
			x = math.Min(good+math.Max(1, math.Floor(v0/4)), float64(intHi))
		}
		if x == good {
			out.Value = good // the end of the search range meets the target
			return 0, 0, true, nil
		}
		e, err := f(x)
		if err != nil {
			return 0, 0, false, err
		}
		if e > target {
			return good, x, false, nil
		}
		good = x
	}
}
