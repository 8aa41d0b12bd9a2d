package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/shuffledp/shuffledp/account"
	"github.com/shuffledp/shuffledp/accounting"
	"github.com/shuffledp/shuffledp/calibrate"
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
			out, err := account.Calibrate(req, solve, target)
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

func writeCalibrateText(w io.Writer, o account.Calibration) {
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
