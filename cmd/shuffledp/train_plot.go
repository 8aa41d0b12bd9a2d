package main

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"gonum.org/v1/plot/vg"

	"github.com/shuffledp/shuffledp/figures"
	"github.com/shuffledp/shuffledp/metrics"
	"github.com/shuffledp/shuffledp/statedir"
)

func newTrainPlotCmd() *cobra.Command {
	var (
		files, labels, refs []string
		out, title, xaxis   string
		xmax                float64
		ema                 bool
		approxDP            int // train_gaussian.go
	)
	cmd := &cobra.Command{
		Use:   "plot --metrics F.jsonl [--metrics G.jsonl ...] --out F.png",
		Short: "Plot test accuracy against epsilon from training metrics (PNG, SVG or PDF)",
		Long: "Plot test accuracy against epsilon from training metrics (PNG, SVG or PDF).\n\n" +
			"--x epsilon_neurips21 puts NeurIPS'21 Theorem 1 alone on the x axis (the paper's own\n" +
			"accounting) and --reference overlays the accuracies a paper states, with their standard\n" +
			"deviations, so that a comparison with the paper is at equal accounting. References: " +
			strings.Join(figures.ReferenceNames(), ", ") + ".",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(files) == 0 {
				return errors.New("metrics: give at least one --metrics file")
			}
			if out == "" {
				return errors.New("out is required (an output file ending in .png, .svg or .pdf)")
			}
			if err := statedir.CheckOutputFile("out", out); err != nil { // before reading anything; no directory is created
				return err
			}
			if len(labels) > 0 && len(labels) != len(files) {
				return fmt.Errorf("label: give one --label per --metrics file (%d files, %d labels)", len(files), len(labels))
			}
			if !(xmax >= 0) || math.IsInf(xmax, 1) {
				return fmt.Errorf("--max-epsilon must be finite and >= 0 (0 keeps all), got %g", xmax)
			}
			a := figures.AccuracyPlot{Title: title, X: xaxis, MaxX: xmax, EMA: ema}
			for _, name := range refs {
				r, ok := figures.References[name]
				if !ok {
					return fmt.Errorf("reference must be one of %s, got %q", strings.Join(figures.ReferenceNames(), ", "), name)
				}
				a.References = append(a.References, r...)
			}
			for i, file := range files {
				recs, err := metrics.Read(file)
				if err != nil {
					return err
				}
				label := filepath.Base(file)
				if len(labels) > 0 {
					label = labels[i]
				} else if len(recs) > 0 && recs[len(recs)-1].Randomizer != "" {
					r := recs[len(recs)-1]
					label = fmt.Sprintf("%s, eps0=%g, k=%d, C=%g", r.Randomizer, r.Eps0, r.Sample, r.Clip)
				}
				a.Series = append(a.Series, figures.AccuracySeries{Label: label, Records: recs})
				if approxDP > 0 {
					s, err := approxDPSeries(recs, approxDP)
					if err != nil {
						return err
					}
					a.Series = append(a.Series, s...)
				}
			}
			p, err := a.Plot()
			if err != nil {
				return err
			}
			if err := p.Save(6*vg.Inch, 4*vg.Inch, out); err != nil {
				return fmt.Errorf("out: %w", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s\n", out)
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&files, "metrics", nil, "JSONL metrics `FILE` written by shuffledp train --metrics (repeatable)")
	cmd.Flags().StringArrayVar(&labels, "label", nil, "legend label for the corresponding --metrics file (repeatable)")
	cmd.Flags().StringVar(&out, "out", "", "output image (.png, .svg or .pdf)")
	cmd.Flags().StringVar(&title, "title", "CLDP-SGD on MNIST: test accuracy vs epsilon", "plot title")
	cmd.Flags().Float64Var(&xmax, "max-epsilon", 0, "leave out evaluations with epsilon above this, >= 0 (0 = keep all)")
	cmd.Flags().StringVar(&xaxis, "x", figures.AxisEpsilon, "x axis: epsilon (the run's best bound) or epsilon_neurips21 (NeurIPS'21 Thm 1 alone, the paper's accounting)")
	cmd.Flags().IntVar(&approxDP, "approx-dp", 0, "for check-in Gaussian runs, also draw the accuracy against the approximate-DP route's epsilon of the same rounds (analytic Gaussian LDP, FMT20 clones, check-in amplification, KOV15) under the run's adjacency (sensitivity 2C for replace-one, C for zero-out and for metrics without an adjacency; a zero-out run also under 2C, the paper's Sec. 5.1 convention) at this many evenly spaced evaluations (0 = off)")
	cmd.Flags().BoolVar(&ema, "ema", false, "also draw the accuracy of the averaged parameters (test_accuracy_ema), dashed")
	cmd.Flags().StringArrayVar(&refs, "reference", nil, "overlay a paper's stated accuracies with their std (repeatable): "+strings.Join(figures.ReferenceNames(), ", "))
	return cmd
}
