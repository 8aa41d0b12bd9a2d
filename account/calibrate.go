package account

import (
	"fmt"
	"slices"
	"strings"

	"github.com/shuffledp/shuffledp/accounting"
	"github.com/shuffledp/shuffledp/calibrate"
	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/route"
)

// Calibration is the answer of Calibrate, and the JSON of `shuffledp
// calibrate --json`: the solved value, the account row at that value
// (epsilon <= target) and the parameters of the mechanism.
type Calibration struct {
	Solve         string  `json:"solve"`
	Value         float64 `json:"value"`
	TargetEpsilon float64 `json:"target_epsilon"`
	Row
	// NextEpsilon is the epsilon at value+1 (integer parameters): > target
	// unless value is the end of the search range.
	NextEpsilon *float64 `json:"next_epsilon,omitempty"`
	// Evaluations counts the accountant evaluations of the search.
	Evaluations int `json:"evaluations"`
	// NoPLDValue is the answer of the first stage of "best" (the RDP and
	// approximate-DP routes, best-no-pld), which the PLD route refined.
	NoPLDValue *float64 `json:"no_pld_value,omitempty"`
	Mechanism  string   `json:"mechanism"`
	N          int64    `json:"n"`
	K          *int64   `json:"k,omitempty"`
	Rate       *float64 `json:"rate,omitempty"`
	Eps0       *float64 `json:"eps0,omitempty"`
	Sigma      *float64 `json:"sigma,omitempty"`
	Steps      int64    `json:"steps"`
	// Adjacency is the neighbouring relation the epsilon is for
	// (--adjacency or the mechanism's default).
	Adjacency string `json:"adjacency"`
}

// Calibrate solves req for the parameter solve so that the epsilon of
// `account` at the same request is <= target (calibrate.Solve). "best" is
// solved in two stages: the cheap routes (RDP and the approximate-DP
// baselines, best-no-pld) give a conservative answer, which, when the
// mechanism has a PLD route (0.05 to 2 s an evaluation), is refined
// against the PLD route beyond it; the answer is reported, and verified
// against the target, by best over every route.
func Calibrate(req Request, solve string, target float64) (Calibration, error) {
	if !slices.Contains(event.Mechanisms(), req.Mechanism) {
		return Calibration{}, fmt.Errorf("--mechanism must be one of %s, got %q", strings.Join(event.Mechanisms(), ", "), req.Mechanism)
	}
	if err := calibrate.Param(solve).Check(); err != nil {
		return Calibration{}, err
	}
	if err := event.CheckSolvable(req.Mechanism, solve); err != nil {
		return Calibration{}, err
	}
	if req.given(solve) {
		return Calibration{}, fmt.Errorf("--%s is what --solve %s solves for; omit it", solve, solve)
	}
	given := req.given // a nil Given: the non-zero fields
	req.Given = func(name string) bool { return name == solve || given(name) }
	refine := false
	if req.Bound == accounting.BoundBest || req.Bound == "" {
		req.Bound = BoundBestNoPLD
		refine = route.HasPLDRoute(req.Mechanism)
	}
	// Placeholders so that the request validates; the search sets them.
	req = withParam(req, solve, 1)
	if err := req.Validate(); err != nil {
		return Calibration{}, err
	}
	epsAt := func(bound string) calibrate.EpsilonFunc {
		return func(x float64) (float64, error) {
			r := withParam(req, solve, x)
			r.Bound = bound
			row, err := evalOne(r)
			return row.Epsilon, err
		}
	}
	pr := calibrate.Problem{Param: calibrate.Param(solve), Target: target, N: req.N, Cheap: epsAt(req.Bound)}
	if refine {
		pr.Refine = epsAt(route.BoundPLD)
		req.Bound = accounting.BoundBest
	}
	sol, err := calibrate.Solve(pr)
	if err != nil {
		return Calibration{}, err
	}
	return calibrationAt(withParam(req, solve, sol.Value), sol, solve, target)
}

// calibrationAt evaluates the answer's request final once more, checks
// it meets the target and assembles the output.
func calibrationAt(final Request, sol calibrate.Solution, solve string, target float64) (Calibration, error) {
	row, err := evalOne(final)
	if err != nil {
		return Calibration{}, err
	}
	if row.Epsilon > target {
		return Calibration{}, fmt.Errorf("internal error: epsilon %g at --%s %g exceeds the target %g", row.Epsilon, solve, sol.Value, target)
	}
	out := Calibration{Solve: solve, Value: sol.Value, TargetEpsilon: target, Row: row, Evaluations: sol.Evaluations,
		NextEpsilon: sol.Next, NoPLDValue: sol.CheapValue,
		Mechanism: final.Mechanism, N: final.N, Steps: final.Steps, Adjacency: final.Event().EffectiveAdjacency()}
	if edge := calibrate.Param(solve).Edge(sol.Value); edge != "" && out.Note != "" {
		out.Note = edge + "; " + out.Note
	} else if edge != "" {
		out.Note = edge
	}
	setParams(&out, final)
	return out, nil
}

// withParam returns req with the parameter solve set to x.
func withParam(req Request, solve string, x float64) Request {
	r := req
	switch solve {
	case string(calibrate.Sigma):
		r.Sigma = x
	case string(calibrate.Eps0):
		r.Eps0 = x
	case string(calibrate.K):
		r.K = int64(x)
	case string(calibrate.Steps):
		r.Steps = int64(x)
	case string(calibrate.Rate):
		r.Rate = x
	}
	return r
}

// evalOne is `account` at one parameter value: its one row, which
// must be a valid upper bound.
func evalOne(r Request) (Row, error) {
	rows, _, err := Rows(r)
	if err != nil {
		return Row{}, err
	}
	if len(rows) != 1 {
		return Row{}, fmt.Errorf("internal error: %d rows for --bound %s", len(rows), r.Bound)
	}
	row := rows[0]
	row.Ends()
	if err := CheckRow(row); err != nil {
		return Row{}, err
	}
	if row.Lower {
		return Row{}, fmt.Errorf("--bound %s is a lower bound: calibrating to it would guarantee nothing", r.Bound)
	}
	return row, nil
}

// setParams sets the parameters of the mechanism in out.
func setParams(out *Calibration, final Request) {
	switch final.Mechanism {
	case event.Shuffle:
		out.Eps0 = &final.Eps0
	case event.SubsampledShuffle:
		out.K, out.Eps0 = &final.K, &final.Eps0
	case event.ShuffleGaussian:
		out.Sigma = &final.Sigma
	case event.SubsampledShuffleGaussian:
		out.K, out.Sigma = &final.K, &final.Sigma
	case event.CheckinGaussian:
		out.Rate, out.Sigma = &final.Rate, &final.Sigma
	case event.SampledGaussian:
		e := final.Event() // the effective rate and sigma; n only if given
		out.N, out.Rate, out.Sigma = e.N, &e.Rate, &e.Sigma
	default:
		if final.Given("sigma") {
			out.Sigma = &final.Sigma
		} else {
			out.Eps0 = &final.Eps0
		}
	}
}
