package main

import (
	"encoding/json"
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
	solveSigma = string(calibrate.Sigma)
	solveSteps = string(calibrate.Steps)
	solveEps0  = string(calibrate.Eps0)
	solveK     = string(calibrate.K)
	solveRate  = string(calibrate.Rate)
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
// `account` at the same request is <= target (calibrate.Solve). "best" is
// solved in two stages: the cheap routes (RDP and the approximate-DP
// baselines, best-no-pld) give a conservative answer, which, when the
// mechanism has a PLD route (0.05 to 2 s an evaluation), is refined
// against the PLD route beyond it; the answer is reported, and verified
// against the target, by best over every route.
func runCalibration(req accountRequest, solve string, target float64) (calibrateOutput, error) {
	if !slices.Contains(event.Mechanisms(), req.Mechanism) {
		return calibrateOutput{}, fmt.Errorf("--mechanism must be one of %s, got %q", strings.Join(event.Mechanisms(), ", "), req.Mechanism)
	}
	if err := calibrate.Param(solve).Check(); err != nil {
		return calibrateOutput{}, err
	}
	if err := event.CheckSolvable(req.Mechanism, solve); err != nil {
		return calibrateOutput{}, err
	}
	if req.Given(solve) {
		return calibrateOutput{}, fmt.Errorf("--%s is what --solve %s solves for; omit it", solve, solve)
	}
	given := req.Given
	req.Given = func(name string) bool { return name == solve || given(name) }
	refine := false
	if req.Bound == accounting.BoundBest || req.Bound == "" {
		req.Bound = boundBestNoPLD
		refine = event.HasPLDRoute(req.Mechanism)
	}
	// Placeholders so that the request validates; the search sets them.
	req = calibrateWith(req, solve, 1)
	if err := validateAccountRequest(req); err != nil {
		return calibrateOutput{}, err
	}
	epsAt := func(bound string) calibrate.EpsilonFunc {
		return func(x float64) (float64, error) {
			r := calibrateWith(req, solve, x)
			r.Bound = bound
			row, err := calibrateEval(r)
			return row.Epsilon, err
		}
	}
	pr := calibrate.Problem{Param: calibrate.Param(solve), Target: target, N: req.N, Cheap: epsAt(req.Bound)}
	if refine {
		pr.Refine = epsAt(event.BoundPLD)
		req.Bound = accounting.BoundBest
	}
	sol, err := calibrate.Solve(pr)
	if err != nil {
		return calibrateOutput{}, err
	}
	return calibrateResult(calibrateWith(req, solve, sol.Value), sol, solve, target)
}

// calibrateResult evaluates the answer's request final once more, checks
// it meets the target and assembles the output.
func calibrateResult(final accountRequest, sol calibrate.Solution, solve string, target float64) (calibrateOutput, error) {
	row, err := calibrateEval(final)
	if err != nil {
		return calibrateOutput{}, err
	}
	if row.Epsilon > target {
		return calibrateOutput{}, fmt.Errorf("internal error: epsilon %g at --%s %g exceeds the target %g", row.Epsilon, solve, sol.Value, target)
	}
	out := calibrateOutput{Solve: solve, Value: sol.Value, TargetEpsilon: target, accountRow: row, Evaluations: sol.Evaluations,
		NextEpsilon: sol.Next, NoPLDValue: sol.CheapValue,
		Mechanism: final.Mechanism, N: final.N, Steps: final.Steps, Adjacency: final.Event().EffectiveAdjacency()}
	if edge := calibrate.Param(solve).Edge(sol.Value); edge != "" && out.Note != "" {
		out.Note = edge + "; " + out.Note
	} else if edge != "" {
		out.Note = edge
	}
	setCalibrateParams(&out, final)
	return out, nil
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
