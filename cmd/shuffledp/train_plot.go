package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"gonum.org/v1/plot/vg"

	"github.com/shuffledp/shuffledp/figures"
	"github.com/shuffledp/shuffledp/statedir"
)

// trainPlotFlags are the flags of train plot.
type trainPlotFlags struct {
	files, labels, refs []string
	out, title, xaxis   string
	frontier            string
	xmax                float64
	ema                 bool
	approxDP            int // train_gaussian.go
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
	cmd.Flags().StringArrayVar(&f.files, "metrics", nil, "JSONL metrics `FILE` written by shuffledp train --metrics (repeatable)")
	cmd.Flags().StringArrayVar(&f.labels, "label", nil, "legend label for the corresponding --metrics file (repeatable)")
	cmd.Flags().StringVar(&f.out, "out", "", "output image (.png, .svg or .pdf)")
	cmd.Flags().StringVar(&f.title, "title", "CLDP-SGD on MNIST: test accuracy vs epsilon", "plot title")
	cmd.Flags().Float64Var(&f.xmax, "max-epsilon", 0, "leave out evaluations with epsilon above this, >= 0 (0 = keep all)")
	cmd.Flags().StringVar(&f.xaxis, "x", figures.AxisEpsilon, "x axis: epsilon (the run's best bound) or epsilon_neurips21 (NeurIPS'21 Thm 1 alone, the paper's accounting)")
	cmd.Flags().IntVar(&f.approxDP, "approx-dp", 0, "for check-in Gaussian runs, also draw the accuracy against the approximate-DP route's epsilon of the same rounds (analytic Gaussian LDP, FMT20 clones, check-in amplification, KOV15) under the run's adjacency (sensitivity 2C for replace-one, C for zero-out and for metrics without an adjacency; a zero-out run also under 2C, the paper's Sec. 5.1 convention) at this many evenly spaced evaluations (0 = off)")
	cmd.Flags().BoolVar(&f.ema, "ema", false, "also draw the accuracy of the averaged parameters (test_accuracy_ema), dashed")
	cmd.Flags().StringVar(&f.frontier, "frontier", "", "instead of --metrics: draw the frontier table `TSV` (figures.ReadFrontier: kind, label, epsilon, accuracy, std) on a log epsilon axis")
	cmd.Flags().StringArrayVar(&f.refs, "reference", nil, "overlay a paper's stated accuracies with their std (repeatable): "+strings.Join(figures.ReferenceNames(), ", "))
	return cmd
}

// runTrainPlot checks the flags before reading anything, reads every
// metrics file (figures.MetricsPlot) and draws the plot.
func runTrainPlot(cmd *cobra.Command, f *trainPlotFlags) error {
	if f.frontier != "" {
		return runFrontierPlot(cmd, f)
	}
	if len(f.files) == 0 {
		return errors.New("metrics: give at least one --metrics file")
	}
	if f.out == "" {
		return errors.New("out is required (an output file ending in .png, .svg or .pdf)")
	}
	if err := statedir.CheckOutputFile("out", f.out); err != nil { // before reading anything; no directory is created
		return err
	}
	a, err := figures.MetricsPlot{Files: f.files, Labels: f.labels, References: f.refs, Title: f.title,
		X: f.xaxis, MaxX: f.xmax, EMA: f.ema, ApproxDP: f.approxDP}.Build()
	if err != nil {
		return err
	}
	p, err := a.Plot()
	if err != nil {
		return err
	}
	if err := p.Save(6*vg.Inch, 4*vg.Inch, f.out); err != nil {
		return fmt.Errorf("out: %w", err)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "wrote %s\n", f.out)
	return nil
}

// runFrontierPlot draws train plot --frontier.
func runFrontierPlot(cmd *cobra.Command, f *trainPlotFlags) error {
	if len(f.files) > 0 || f.out == "" {
		return errors.New("frontier: give --out and no --metrics")
	}
	if err := statedir.CheckOutputFile("out", f.out); err != nil {
		return err
	}
	in, err := os.Open(f.frontier)
	if err != nil {
		return fmt.Errorf("frontier: %w", err)
	}
	defer in.Close()
	fr, err := figures.ReadFrontier(in)
	if err != nil {
		return err
	}
	fr.Title = f.title
	p, err := fr.Plot()
	if err != nil {
		return err
	}
	if err := p.Save(7*vg.Inch, 4.5*vg.Inch, f.out); err != nil {
		return fmt.Errorf("out: %w", err)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "wrote %s\n", f.out)
	return nil
}
