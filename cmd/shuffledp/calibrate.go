package main

import (
	"fmt"
	"math"

	"github.com/spf13/cobra"

	"github.com/shuffledp/shuffledp/account"
	"github.com/shuffledp/shuffledp/accounting"
	"github.com/shuffledp/shuffledp/calibrate"
	"github.com/shuffledp/shuffledp/cliflag"
)

func init() { rootCmd.AddCommand(newCalibrateCmd()) }

// calibrateFlags are the flags of calibrate: account's, the target and the
// parameter to solve for.
type calibrateFlags struct {
	mechanismFlags
	Target float64 `flag:"epsilon" usage:"target epsilon (required)"`
	Solve  string  `flag:"solve" usage:"parameter to solve for: sigma|steps|eps0|k|rate (required)"`
}

func newCalibrateCmd() *cobra.Command {
	var f calibrateFlags
	cmd := &cobra.Command{
		Use:   "calibrate",
		Short: "Solve for sigma, steps, eps0 or k so that the (epsilon, delta) spent meets a target",
		Long:  longHelp("calibrate"),
		Example: `  shuffledp calibrate --mechanism shuffle-gaussian --n 60000 --steps 100 --delta 1e-5 --epsilon 1 --solve sigma
  shuffledp calibrate --mechanism subsampled-shuffle --n 1e6 --k 1000 --eps0 2 --delta 1e-8 --epsilon 4 --solve steps --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			given := cmd.Flags().Changed
			if !given("epsilon") {
				return fmt.Errorf("--epsilon (the target) is required")
			}
			if !(f.Target > 0) || math.IsInf(f.Target, 0) {
				return fmt.Errorf("--epsilon must be positive and finite, got %g", f.Target)
			}
			if !given("solve") {
				return fmt.Errorf("--solve is required: one of %s, %s, %s, %s, %s", calibrate.Sigma, calibrate.Steps, calibrate.Eps0, calibrate.K, calibrate.Rate)
			}
			if f.Bound == account.BoundAll {
				return fmt.Errorf("--bound all is not one bound; calibrate to one bound (default %s)", accounting.BoundBest)
			}
			req, err := f.request(cmd)
			if err != nil {
				return err
			}
			out, err := account.Calibrate(req, f.Solve, f.Target)
			if err != nil {
				return err
			}
			if f.JSON {
				return out.WriteJSON(cmd.OutOrStdout())
			}
			return out.WriteText(cmd.OutOrStdout())
		},
	}
	cliflag.MustBind(cmd.Flags(), &f)
	cmd.Flags().Lookup("bound").Usage = "bound to calibrate to (see account --help)"
	return cmd
}
