package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/shuffledp/shuffledp/cliflag"
	"github.com/shuffledp/shuffledp/figures"
	"github.com/shuffledp/shuffledp/statedir"
)

// trainPlotFlags are the flags of train plot: the plot's (figures.MetricsPlot)
// and where it goes.
type trainPlotFlags struct {
	figures.MetricsPlot
	Out      string `flag:"out" usage:"output image (.png, .svg or .pdf)"`
	Frontier string `flag:"frontier" metavar:"TSV" usage:"instead of --metrics: draw the frontier table TSV (figures.ReadFrontier: kind, label, epsilon, accuracy, std) on a log epsilon axis"`
}

func newTrainPlotCmd() *cobra.Command {
	var f trainPlotFlags
	cmd := &cobra.Command{
		Use:   "plot --metrics F.jsonl [--metrics G.jsonl ...] --out F.png",
		Short: "Plot test accuracy against epsilon from training metrics (PNG, SVG or PDF)",
		Long: "Plot test accuracy against epsilon from training metrics (PNG, SVG or PDF).\n\n" +
			"--x epsilon_neurips21 puts NeurIPS'21 Theorem 1 alone on the x axis (the paper's own\n" +
			"accounting) and --reference overlays the accuracies a paper states, with their standard\n" +
			"deviations, so that a comparison with the paper is at equal accounting. References: " +
			strings.Join(figures.ReferenceNames(), ", ") + ".",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runTrainPlot(cmd, &f) },
	}
	cliflag.MustBind(cmd.Flags(), &f)
	return cmd
}

// runTrainPlot checks the flags before reading anything, then draws the
// metrics files' plot (figures.MetricsPlot.Save) or the frontier's.
func runTrainPlot(cmd *cobra.Command, f *trainPlotFlags) error {
	switch {
	case f.Frontier != "" && (len(f.Files) > 0 || f.Out == ""):
		return errors.New("frontier: give --out and no --metrics")
	case f.Frontier == "" && len(f.Files) == 0:
		return errors.New("metrics: give at least one --metrics file")
	case f.Out == "":
		return errors.New("out is required (an output file ending in .png, .svg or .pdf)")
	}
	if err := statedir.CheckOutputFile("out", f.Out); err != nil { // before reading anything; no directory is created
		return err
	}
	var err error
	if f.Frontier != "" {
		err = figures.SaveFrontier(f.Frontier, f.Title, f.Out)
	} else {
		err = f.Save(f.Out)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "wrote %s\n", f.Out)
	return nil
}
