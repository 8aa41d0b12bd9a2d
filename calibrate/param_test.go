package calibrate

import (
	"errors"
	"math"
	"testing"
)

// Monotone epsilon functions with closed-form answers, one per Param:
// epsilon non-increasing in sigma, non-decreasing in the others.
var paramCases = []struct {
	p      Param
	eps    func(x float64) float64
	answer func(target float64) float64 // the exact boundary eps(x) = target
}{
	{Sigma, func(s float64) float64 { return 3 / s }, func(t float64) float64 { return 3 / t }},
	{Eps0, func(e float64) float64 { return 0.5 * e }, func(t float64) float64 { return 2 * t }},
	{Rate, func(r float64) float64 { return 4 * r * r }, func(t float64) float64 { return math.Sqrt(t / 4) }},
	{Steps, func(s float64) float64 { return 0.01 * math.Sqrt(s) }, func(t float64) float64 { return math.Floor(t * t * 1e4) }},
	{K, func(k float64) float64 { return 0.002 * k }, func(t float64) float64 { return math.Floor(t / 0.002) }},
}

// TestSearchMeetsTargetTightly checks, for every Param, that Search
// returns a value whose epsilon meets the target and that lies within the
// search tolerance (exact for integers) of the closed-form answer.
func TestSearchMeetsTargetTightly(t *testing.T) {
	const target = 0.7
	for _, c := range paramCases {
		eps := func(x float64) (float64, error) { return c.eps(x), nil }
		v, evals, _, err := Search(c.p, target, 10000, eps)
		if err != nil {
			t.Fatalf("%s: %v", c.p, err)
		}
		if c.eps(v) > target {
			t.Errorf("%s = %g spends %g > target %g", c.p, v, c.eps(v), target)
		}
		want := c.answer(target)
		if tol := 1e-6 * want; math.Abs(v-want) > tol && !(c.p.Integer() && v == want) {
			t.Errorf("%s = %g, want %g (evaluations %d)", c.p, v, want, evals)
		}
	}
}

// TestSolveRefinesBeyondCheapRoute checks the two-stage solve: with a
// cheap route strictly above the refining one, the first stage's answer is
// kept as CheapValue, the refined value meets the target under the
// refining route, is at least as good as the cheap answer and is within
// the refinement tolerance of the refining route's exact answer.
func TestSolveRefinesBeyondCheapRoute(t *testing.T) {
	const target = 0.7
	for _, c := range paramCases {
		fine := func(x float64) (float64, error) { return c.eps(x), nil }
		cheap := func(x float64) (float64, error) { return 1.3 * c.eps(x), nil }
		s, err := Solve(Problem{Param: c.p, Target: target, N: 10000, Cheap: cheap, Refine: fine})
		if err != nil {
			t.Fatalf("%s: %v", c.p, err)
		}
		if s.CheapValue == nil {
			t.Fatalf("%s: no CheapValue", c.p)
		}
		v, v0 := s.Value, *s.CheapValue
		if c.eps(v) > target {
			t.Errorf("%s = %g spends %g > target", c.p, v, c.eps(v))
		}
		if c.p == Sigma && v >= v0 || c.p != Sigma && v <= v0 {
			t.Errorf("%s: refined %g does not improve on the cheap answer %g", c.p, v, v0)
		}
		want := c.answer(target)
		if math.Abs(v-want) > 2*RefineTol*want+1e-12 && !(c.p.Integer() && math.Abs(v-want) <= math.Max(1, want*RefineTol)) {
			t.Errorf("%s = %g, want %g within the refinement tolerance", c.p, v, want)
		}
		if c.p.Integer() && s.Next != nil && *s.Next <= target {
			t.Errorf("%s: epsilon at %g+1 is %g <= target", c.p, v, *s.Next)
		}
	}
}

// TestRefineBeyondKeepsCheapAnswer: where the refining route does not
// meet the target beyond the cheap answer either, RefineBeyond returns
// that answer after one evaluation, and for integers the infeasible
// neighbour with its epsilon.
func TestRefineBeyondKeepsCheapAnswer(t *testing.T) {
	step := func(x float64) (float64, error) {
		if x > 40 {
			return 2, nil
		}
		return 0.5, nil
	}
	r, err := RefineBeyond(Steps, 40, 1000, 1, step)
	if err != nil {
		t.Fatal(err)
	}
	if r.Value != 40 || r.Next != 41 || r.NextEpsilon != 2 || r.Evaluations != 1 {
		t.Errorf("RefineBeyond = %+v, want value 40, next 41 at epsilon 2, 1 evaluation", r)
	}
	r, err = RefineBeyond(Eps0, 40, 0, 1, step)
	if err != nil {
		t.Fatal(err)
	}
	if r.Value != 40 || r.Next != 0 || r.Evaluations != 1 {
		t.Errorf("RefineBeyond(eps0) = %+v, want value 40 after 1 evaluation", r)
	}
}

// TestSolveErrorsNameFlags: an unreachable target names --epsilon and the
// solved flag; an unknown Param names --solve.
func TestSolveErrorsNameFlags(t *testing.T) {
	never := func(float64) (float64, error) { return 10, nil }
	_, err := Solve(Problem{Param: Sigma, Target: 1, Cheap: never})
	if !errors.Is(err, ErrUnreachable) || err.Error()[:len("--epsilon 1 is unreachable by varying --sigma")] != "--epsilon 1 is unreachable by varying --sigma" {
		t.Errorf("unreachable: %v", err)
	}
	if err := Param("x").Check(); err == nil || err.Error() != `--solve must be one of sigma, steps, eps0, k, rate, got "x"` {
		t.Errorf("Check: %v", err)
	}
	for _, tc := range []struct {
		p    Param
		v    float64
		edge bool
	}{{Sigma, SigmaMin, true}, {Sigma, 1, false}, {Eps0, Eps0Max, true}, {Rate, 1, true}, {Steps, StepsMax, true}, {K, 5, false}} {
		if got := tc.p.Edge(tc.v) != ""; got != tc.edge {
			t.Errorf("%s.Edge(%g) = %v, want %v", tc.p, tc.v, got, tc.edge)
		}
	}
}
