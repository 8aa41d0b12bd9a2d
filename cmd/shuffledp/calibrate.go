package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/shuffledp/shuffledp/accounting"
	"github.com/shuffledp/shuffledp/calibrate"
	"github.com/shuffledp/shuffledp/event"
	"github.com/spf13/cobra"
)

// Parameters `shuffledp calibrate --solve` can solve for.
const (
	solveSigma = "sigma"
	solveSteps = "steps"
	solveEps0  = "eps0"
	solveK     = "k"
	solveRate  = "rate"
)

// Search ranges of the continuous parameters, and the decimal digits the
// answer is rounded to (in the conservative direction, then re-evaluated).
const (
	sigmaSearchMin = 0.01
	sigmaSearchMax = 1e4
	eps0SearchMin  = 1e-9
	eps0SearchMax  = 64
	rateSearchMin  = 1e-9
	stepsSearchMax = 1 << 40
	calibrateTol   = 1e-7
	calibrateDigit = 7
)

func init() { rootCmd.AddCommand(newCalibrateCmd()) }

// calibrateOutput is the JSON of `shuffledp calibrate --json`: the solved
// value, the account row at that value (epsilon <= target) and the
// parameters of the mechanism.
type calibrateOutput struct {
	Solve         string  `json:"solve"`
	Value         float64 `json:"value"`
	TargetEpsilon float64 `json:"target_epsilon"`
	accountRow
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

func newCalibrateCmd() *cobra.Command {
	var (
		req        accountRequest
		ordersSpec string
		asJSON     bool
		target     float64
		solve      string
	)
	cmd := &cobra.Command{
		Use:   "calibrate",
		Short: "Solve for sigma, steps, eps0 or k so that the (epsilon, delta) spent meets a target",
		Long:  longHelp("calibrate"),
		Example: `  shuffledp calibrate --mechanism shuffle-gaussian --n 60000 --steps 100 --delta 1e-5 --epsilon 1 --solve sigma
  shuffledp calibrate --mechanism subsampled-shuffle --n 1e6 --k 1000 --eps0 2 --delta 1e-8 --epsilon 4 --solve steps --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			given := func(name string) bool { return cmd.Flags().Changed(name) }
			if !given("epsilon") {
				return fmt.Errorf("--epsilon (the target) is required")
			}
			if !(target > 0) || math.IsInf(target, 0) {
				return fmt.Errorf("--epsilon must be positive and finite, got %g", target)
			}
			if !given("solve") {
				return fmt.Errorf("--solve is required: one of %s, %s, %s, %s, %s", solveSigma, solveSteps, solveEps0, solveK, solveRate)
			}
			if req.Bound == "all" {
				return fmt.Errorf("--bound all is not one bound; calibrate to one bound (default %s)", accounting.BoundBest)
			}
			orders, err := accounting.ParseOrders(ordersSpec)
			if err != nil {
				return fmt.Errorf("--orders: %w", err)
			}
			req.Orders = orders
			req.Given = given
			out, err := runCalibration(req, solve, target)
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(out)
			}
			writeCalibrateText(cmd.OutOrStdout(), out)
			return nil
		},
	}
	f := cmd.Flags()
	f.Float64Var(&target, "epsilon", 0, "target epsilon (required)")
	f.StringVar(&solve, "solve", "", "parameter to solve for: sigma|steps|eps0|k|rate (required)")
	addMechanismFlags(f, &req, &ordersSpec, "bound to calibrate to (see account --help)")
	f.BoolVar(&asJSON, "json", false, "print one JSON object")
	return cmd
}

// runCalibration solves req for the parameter solve so that the epsilon of
// `account` at the same request is <= target.
func runCalibration(req accountRequest, solve string, target float64) (calibrateOutput, error) {
	if !slices.Contains(event.Mechanisms(), req.Mechanism) {
		return calibrateOutput{}, fmt.Errorf("--mechanism must be one of %s, got %q", strings.Join(event.Mechanisms(), ", "), req.Mechanism)
	}
	if err := checkCalibrateSolve(req.Mechanism, solve); err != nil {
		return calibrateOutput{}, err
	}
	if req.Given(solve) {
		return calibrateOutput{}, fmt.Errorf("--%s is what --solve %s solves for; omit it", solve, solve)
	}
	given := req.Given
	req.Given = func(name string) bool { return name == solve || given(name) }
	// "best" is solved in two stages: the cheap routes (RDP and the
	// approximate-DP baselines, best-no-pld) give a conservative answer,
	// one end of the bracket; when the mechanism has a PLD route (0.05 to
	// 2 s an evaluation), the answer is then refined against "best" with
	// every route inside the bracket (refineWithPLD).
	refine := false
	if req.Bound == accounting.BoundBest || req.Bound == "" {
		req.Bound = boundBestNoPLD
		refine = hasPLDRoute(req.Mechanism)
	}
	// Placeholders so that the request validates; the search sets them.
	req = calibrateWith(req, solve, 1)
	if err := validateAccountRequest(req); err != nil {
		return calibrateOutput{}, err
	}

	with := func(x float64) accountRequest { return calibrateWith(req, solve, x) }
	epsAt := func(x float64) (float64, error) {
		row, err := calibrateEval(with(x))
		return row.Epsilon, err
	}

	value, evals, hi, err := calibrateSearch(solve, target, req.N, epsAt)
	if err != nil {
		if errors.Is(err, calibrate.ErrUnreachable) {
			return calibrateOutput{}, fmt.Errorf("--epsilon %g is unreachable by varying --%s: %w", target, solve, err)
		}
		return calibrateOutput{}, fmt.Errorf("calibrating --%s: %w", solve, err)
	}
	var refinedNext *float64 // epsilon at value+1 from the PLD stage (integers)
	noPLD := value
	if refine {
		req.Bound = event.BoundPLD
		var more int
		var next, nextEps float64
		value, next, nextEps, more, err = refineWithPLD(solve, value, hi, target, func(x float64) (float64, error) {
			row, err := calibrateEval(with(x))
			return row.Epsilon, err
		})
		evals += more
		if err != nil {
			return calibrateOutput{}, fmt.Errorf("calibrating --%s against the PLD route: %w", solve, err)
		}
		if next > 0 {
			// best at value+1 is the smaller of the PLD route's epsilon
			// there and the cheap routes' (evaluated now: milliseconds).
			r := with(next)
			r.Bound = boundBestNoPLD
			if row, err := calibrateEval(r); err == nil && row.Epsilon < nextEps {
				nextEps = row.Epsilon
			}
			refinedNext = &nextEps
		}
		// The answer is reported (and verified against the target) by
		// best over every route, one evaluation.
		req.Bound = accounting.BoundBest
	}
	final := with(value)
	row, err := calibrateEval(final)
	if err != nil {
		return calibrateOutput{}, err
	}
	if row.Epsilon > target {
		return calibrateOutput{}, fmt.Errorf("internal error: epsilon %g at --%s %g exceeds the target %g", row.Epsilon, solve, value, target)
	}
	out := calibrateOutput{Solve: solve, Value: value, TargetEpsilon: target, accountRow: row, Evaluations: evals,
		Mechanism: final.Mechanism, N: final.N, Steps: final.Steps, Adjacency: final.event().EffectiveAdjacency()}
	if refine {
		// The PLD route at value+1 when the search evaluated it (it is then
		// above the target, and so is best, whose cheap routes are too);
		// another PLD evaluation is not spent on it.
		out.NextEpsilon = refinedNext
		out.NoPLDValue = &noPLD
	} else if (solve == solveK || solve == solveSteps) && int64(value) < hi {
		next, err := calibrateEval(with(value + 1))
		if err == nil {
			out.NextEpsilon = &next.Epsilon
		}
	}
	if edge := calibrateEdge(solve, value); edge != "" && out.Note != "" {
		out.Note = edge + "; " + out.Note
	} else if edge != "" {
		out.Note = edge
	}
	setCalibrateParams(&out, final)
	return out, nil
}

// checkCalibrateSolve refuses a --solve that the mechanism has no such
// parameter for.
func checkCalibrateSolve(mechanism, solve string) error {
	gauss := event.IsGaussian(mechanism) || mechanism == event.SampledGaussian
	switch solve {
	case solveSigma:
		if !gauss {
			return fmt.Errorf("--solve sigma needs a Gaussian --mechanism (%s, %s, %s, %s); for %s solve eps0",
				event.ShuffleGaussian, event.SubsampledShuffleGaussian, event.CheckinGaussian, event.SampledGaussian, mechanism)
		}
	case solveEps0:
		if gauss {
			return fmt.Errorf("--solve eps0 needs an LDP --mechanism (%s, %s); for %s solve sigma",
				event.Shuffle, event.SubsampledShuffle, mechanism)
		}
	case solveK:
		if mechanism != event.SubsampledShuffle && mechanism != event.SubsampledShuffleGaussian {
			return fmt.Errorf("--solve k needs --mechanism %s or %s (k of n sampled per round), got %s",
				event.SubsampledShuffle, event.SubsampledShuffleGaussian, mechanism)
		}
	case solveRate:
		if mechanism != event.CheckinGaussian && mechanism != event.SampledGaussian {
			return fmt.Errorf("--solve rate needs --mechanism %s or %s, got %s", event.CheckinGaussian, event.SampledGaussian, mechanism)
		}
	case solveSteps:
	default:
		return fmt.Errorf("--solve must be one of %s, %s, %s, %s, %s, got %q", solveSigma, solveSteps, solveEps0, solveK, solveRate, solve)
	}
	return nil
}

// calibrateWith returns req with the parameter solve set to x.
func calibrateWith(req accountRequest, solve string, x float64) accountRequest {
	r := req
	switch solve {
	case solveSigma:
		r.Sigma = x
	case solveEps0:
		r.Eps0 = x
	case solveK:
		r.K = int64(x)
	case solveSteps:
		r.Steps = int64(x)
	case solveRate:
		r.Rate = x
	}
	return r
}

// calibrateEval is `account` at one parameter value: its one row, which
// must be a valid upper bound.
func calibrateEval(r accountRequest) (accountRow, error) {
	rows, _, err := accountRows(r)
	if err != nil {
		return accountRow{}, err
	}
	if len(rows) != 1 {
		return accountRow{}, fmt.Errorf("internal error: %d rows for --bound %s", len(rows), r.Bound)
	}
	row := rows[0]
	if err := checkRow(row); err != nil {
		return accountRow{}, err
	}
	if row.Lower {
		return accountRow{}, fmt.Errorf("--bound %s is a lower bound: calibrating to it would guarantee nothing", r.Bound)
	}
	return row, nil
}

// calibrateSearch finds the best value of the parameter solve at which
// epsAt meets target, rounded on the feasible side; hi is the end of the
// integer range of k and steps.
func calibrateSearch(solve string, target float64, n int64, epsAt func(float64) (float64, error)) (value float64, evals int, hi int64, err error) {
	epsAtInt := func(x int64) (float64, error) { return epsAt(float64(x)) }
	switch solve {
	case solveSigma:
		// Bracket within a factor 2 first (from sigma = 1, halving or
		// doubling): Illinois then needs far fewer steps than from the
		// whole range, where epsilon spans many decades.
		var lo, hi float64
		var pre int
		lo, hi, pre, err = calibrate.BracketDecreasing(epsAt, target, 1, sigmaSearchMin, sigmaSearchMax)
		if err == nil {
			var r calibrate.Result
			r, err = calibrate.SmallestFeasible(epsAt, target, lo, hi, hi, calibrateTol)
			value, evals = r.Value, pre+r.Evaluations
		}
		if err == nil {
			value = calibrate.RoundSafe(value, calibrateDigit, true, target, epsAt)
		}
	case solveEps0:
		var r calibrate.Result
		r, err = calibrate.LargestFeasible(epsAt, target, eps0SearchMin, 1, eps0SearchMax, calibrateTol)
		value, evals = r.Value, r.Evaluations
		if err == nil {
			value = calibrate.RoundSafe(value, calibrateDigit, false, target, epsAt)
		}
	case solveRate:
		var r calibrate.Result
		r, err = calibrate.LargestFeasible(epsAt, target, rateSearchMin, 0.5, 1, calibrateTol)
		value, evals = r.Value, r.Evaluations
		if err == nil {
			value = calibrate.RoundSafe(value, calibrateDigit, false, target, epsAt)
		}
	case solveK, solveSteps:
		lo := int64(1)
		hi = stepsSearchMax
		if solve == solveK {
			hi = n
		}
		var r calibrate.IntResult
		r, err = calibrate.LargestFeasibleInt(epsAtInt, target, lo, hi)
		value, evals = float64(r.Value), r.Evaluations
	}
	return value, evals, hi, err
}

// calibrateEdge notes a value at the edge of the search range.
func calibrateEdge(solve string, value float64) string {
	switch {
	case solve == solveSigma && value == sigmaSearchMin:
		return fmt.Sprintf("search floor sigma = %g reached: a smaller sigma may meet the target too", sigmaSearchMin)
	case solve == solveEps0 && value == eps0SearchMax:
		return fmt.Sprintf("search ceiling eps0 = %g reached: a larger eps0 may meet the target too", float64(eps0SearchMax))
	case solve == solveRate && value == 1:
		return "rate = 1 (every client checks in) meets the target"
	case solve == solveSteps && value == stepsSearchMax:
		return fmt.Sprintf("search ceiling steps = %d reached: more steps may meet the target too", int64(stepsSearchMax))
	}
	return ""
}

// setCalibrateParams sets the parameters of the mechanism in out.
func setCalibrateParams(out *calibrateOutput, final accountRequest) {
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
		e := final.event() // the effective rate and sigma; n only if given
		out.N, out.Rate, out.Sigma = e.N, &e.Rate, &e.Sigma
	default:
		if final.Given("sigma") {
			out.Sigma = &final.Sigma
		} else {
			out.Eps0 = &final.Eps0
		}
	}
}

func writeCalibrateText(w io.Writer, o calibrateOutput) {
	val := strconv.FormatFloat(o.Value, 'g', -1, 64)
	if o.Solve == solveSteps || o.Solve == solveK {
		val = strconv.FormatFloat(o.Value, 'f', 0, 64)
	}
	fmt.Fprintf(w, "%s = %s: epsilon %.10g <= target %g at delta %g (mechanism %s", o.Solve, val, o.Epsilon, o.TargetEpsilon, o.Delta, o.Mechanism)
	if o.N != 0 { // sampled-gaussian without --n
		fmt.Fprintf(w, ", n=%d", o.N)
	}
	if o.K != nil {
		fmt.Fprintf(w, ", k=%d", *o.K)
	}
	if o.Rate != nil {
		fmt.Fprintf(w, ", rate=%g", *o.Rate)
	}
	if o.Eps0 != nil {
		fmt.Fprintf(w, ", eps0=%g", *o.Eps0)
	}
	if o.Sigma != nil {
		fmt.Fprintf(w, ", sigma=%g", *o.Sigma)
	}
	fmt.Fprintf(w, ", steps=%d, adjacency %s; bound %s", o.Steps, o.Adjacency, o.Bound)
	if o.Winner != "" {
		fmt.Fprintf(w, " won by %s", o.Winner)
	}
	if o.Order > 0 {
		fmt.Fprintf(w, ", order %g", o.Order)
	}
	fmt.Fprintf(w, "; %d evaluations)\n", o.Evaluations)
	if o.NoPLDValue != nil && *o.NoPLDValue != o.Value {
		fmt.Fprintf(w, "without the PLD route (best-no-pld): %s = %s\n", o.Solve, strconv.FormatFloat(*o.NoPLDValue, 'g', -1, 64))
	}
	if o.NextEpsilon != nil {
		fmt.Fprintf(w, "%s = %d would spend epsilon %.10g\n", o.Solve, int64(o.Value)+1, *o.NextEpsilon)
	}
	if o.Note != "" {
		fmt.Fprintf(w, "note: %s\n", o.Note)
	}
	if o.AtGridEdge {
		fmt.Fprintf(w, "warning: the optimal order %g is at the edge of the grid; widen --orders\n", o.Order)
	}
}

// hasPLDRoute says whether `account --bound best` has a PLD route for the
// mechanism (a dominating pair is known: event.Best).
func hasPLDRoute(mechanism string) bool {
	return mechanism == event.Shuffle || mechanism == event.SubsampledShuffle || mechanism == event.SampledGaussian
}

// Tolerances of the PLD stage of "best": a PLD evaluation costs 0.05 to
// 2 s, so the refinement stops at a relative 1e-4 (continuous parameters,
// then rounded to 5 significant digits in the safe direction; integers
// once the infeasible end is within 1e-4 of the feasible one) instead of
// the first stage's 1e-7: about 6 to 12 PLD evaluations.
const (
	pldRefineTol   = 1e-4
	pldRefineDigit = 5
	pldRefineGrow  = 1.25
)

// refineWithPLD moves the answer v0 of the cheap routes (feasible under
// best-no-pld, hence under best, which is never larger) towards the
// epsilon-spending side as far as the PLD route allows. Beyond v0 the
// cheap routes exceed the target, so best meets it exactly where the PLD
// route does: the search evaluates the PLD route alone (epsPLD), from v0
// (sigma divided by 1.25, eps0 or rate multiplied by 1.25, steps or k grown
// by v0/4, repeatedly, until infeasible), then narrows the bracket (Illinois
// for sigma, eps0 and rate; integer bisection for steps and k) and rounds
// in the safe direction. Every value it returns was evaluated feasible
// (the caller verifies it once more by best), so the answer never spends
// more than the target whatever the accuracy of the search. It returns the
// answer, the infeasible end next to it for integers when it is answer+1
// (0 otherwise) and its epsilon, and the number of PLD evaluations. intHi
// is the end of the integer range (steps, k).
func refineWithPLD(solve string, v0 float64, intHi int64, target float64, epsPLD calibrate.EpsilonFunc) (v float64, next float64, nextEps float64, n int, err error) {
	memo := map[float64]float64{}
	f := func(x float64) (float64, error) {
		if v, ok := memo[x]; ok {
			return v, nil
		}
		n++
		v, err := epsPLD(x)
		if err != nil {
			return 0, err
		}
		memo[x] = v
		return v, nil
	}
	fail := func(err error) (float64, float64, float64, int, error) { return 0, 0, 0, n, err }
	// A PLD route that does not meet the target beyond v0's cheap answer:
	// keep v0 (sigma: one step below; others: one step above).
	grow := func(x float64) float64 {
		switch solve {
		case solveSigma:
			return math.Max(x/pldRefineGrow, sigmaSearchMin)
		case solveEps0:
			return math.Min(x*pldRefineGrow, eps0SearchMax)
		case solveRate:
			return math.Min(x*pldRefineGrow, 1)
		default:
			return math.Min(x+math.Max(1, math.Floor(v0/4)), float64(intHi))
		}
	}
	good := v0
	var bad float64
	// First the smallest move the refinement resolves: when the PLD route
	// does not meet the target there either (a cheap route wins), v0 is
	// the answer at the cost of one PLD evaluation.
	nudge := func(x float64) float64 {
		switch solve {
		case solveSigma:
			return math.Max(x*(1-pldRefineTol), sigmaSearchMin)
		case solveEps0:
			return math.Min(x*(1+pldRefineTol), eps0SearchMax)
		case solveRate:
			return math.Min(x*(1+pldRefineTol), 1)
		default:
			return math.Min(x+1, float64(intHi))
		}
	}
	if x := nudge(v0); x != v0 {
		e, err := f(x)
		if err != nil {
			return fail(err)
		}
		if e > target {
			if solve == solveSteps || solve == solveK {
				return v0, x, e, n, nil
			}
			return v0, 0, 0, n, nil
		}
		good = x
	}
	for {
		x := grow(good)
		if x == good {
			return good, 0, 0, n, nil // the end of the search range meets the target
		}
		e, err := f(x)
		if err != nil {
			return fail(err)
		}
		if e > target {
			bad = x
			break
		}
		good = x
	}
	switch solve {
	case solveSigma, solveEps0, solveRate:
		var r calibrate.Result
		lo, hi := good, bad
		if solve == solveSigma {
			lo, hi = bad, good
			r, err = calibrate.SmallestFeasible(f, target, lo, hi, hi, pldRefineTol)
		} else {
			r, err = calibrate.LargestFeasible(f, target, lo, lo, hi, pldRefineTol)
		}
		if err != nil {
			return fail(err)
		}
		// r.Value is good or a value evaluated feasible; its rounding is
		// kept only where it still improves on v0.
		v := calibrate.RoundSafe(r.Value, pldRefineDigit, solve == solveSigma, target, f)
		if solve == solveSigma && v > v0 || solve != solveSigma && v < v0 {
			v = r.Value
		}
		return v, 0, 0, n, nil
	}
	for bad-good > math.Max(1, math.Floor(good*pldRefineTol)) {
		x := good + math.Floor((bad-good)/2)
		e, err := f(x)
		if err != nil {
			return fail(err)
		}
		if e <= target {
			good = x
		} else {
			bad = x
		}
	}
	if bad == good+1 {
		return good, bad, memo[bad], n, nil
	}
	return good, 0, 0, n, nil
}
