package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/shuffledp/shuffledp/figures"
	"github.com/shuffledp/shuffledp/statedir"
	"github.com/spf13/cobra"
)

func init() { rootCmd.AddCommand(newFigureCmd()) }

// ratiosFigureName is the pseudo-figure that prints the headline-ratio table.
const ratiosFigureName = "ratios"

func newFigureCmd() *cobra.Command {
	var (
		out     string
		csvPath string
		list    bool
		points  int
	)
	cmd := &cobra.Command{
		Use:   "figure NAME --out FILE.png|FILE.svg [--csv FILE] | figure ratios [--csv FILE] | figure --list",
		Short: "Reproduce the NeurIPS'21 accounting figures (eps vs T, eps vs n) and headline ratios",
		Long:  longHelp("figure"),
		Args: func(cmd *cobra.Command, args []string) error {
			if list {
				return cobra.NoArgs(cmd, args)
			}
			if len(args) != 1 {
				return fmt.Errorf("figure needs exactly one NAME (see --list), got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if list {
				return writeFigureList(cmd.OutOrStdout())
			}
			if args[0] == ratiosFigureName {
				if err := statedir.CheckOutputFiles("csv", csvPath); err != nil {
					return err
				}
				return runRatios(cmd, figures.AllBounds(), csvPath)
			}
			return writeFigure(cmd.OutOrStdout(), args[0], out, csvPath, points)
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "output image, FILE.png or FILE.svg")
	cmd.Flags().StringVar(&csvPath, "csv", "", "also write the series as CSV to this file")
	cmd.Flags().BoolVar(&list, "list", false, "list the figures")
	cmd.Flags().IntVar(&points, "points", 21, fmt.Sprintf("number of log-spaced x values, >= 2 and <= %d (at %d the slowest figure, neurips21-fig4c, takes about 16 s of CPU and 90 MB)", figures.MaxPoints, figures.MaxPoints))
	return cmd
}

func runRatios(cmd *cobra.Command, bounds []figures.Bound, csvPath string) error {
	rows, missing, err := figures.Ratios(bounds)
	if err != nil {
		return err
	}
	w := cmd.OutOrStdout()
	if err := figures.WriteRatiosText(w, rows); err != nil {
		return err
	}
	for _, m := range missing {
		fmt.Fprintf(w, "not evaluated (bound not available): %s\n", m)
	}
	if csvPath != "" {
		var buf bytes.Buffer
		if err := figures.WriteRatiosCSV(&buf, rows); err != nil {
			return err
		}
		if err := os.WriteFile(csvPath, buf.Bytes(), 0o644); err != nil {
			return fmt.Errorf("--csv: %w", err)
		}
		fmt.Fprintf(w, "wrote %s\n", csvPath)
	}
	return nil
}

// writeFigureList lists the figures and their captions, and ratios.
func writeFigureList(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, f := range figures.List() {
		fmt.Fprintf(tw, "%s\t%s\n", f.Name, f.Caption)
	}
	fmt.Fprintf(tw, "%s\t%s\n", ratiosFigureName, "headline ratios of the papers next to what we measure (text; --csv for CSV)")
	return tw.Flush()
}

// writeFigure computes the named figure at points x values (figures.Build),
// writes its image to out (and its series as CSV to csvPath, when set) and
// says so on w.
func writeFigure(w io.Writer, name, out, csvPath string, points int) error {
	if _, err := figures.Lookup(name); err != nil {
		return err
	}
	if out == "" {
		return fmt.Errorf("--out is required (FILE.png or FILE.svg)")
	}
	format, err := figures.FormatOf(out)
	if err != nil {
		return err
	}
	if err := figures.CheckPoints(points); err != nil {
		return err
	}
	if err := statedir.CheckOutputFiles("out", out, "csv", csvPath); err != nil {
		return err
	}
	b, err := figures.Build(name, points, format, csvPath != "")
	if err != nil {
		return err
	}
	if err := os.WriteFile(out, b.Image, 0o644); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	fmt.Fprintf(w, "wrote %s (%s, %d points, series: %s)\n", out, b.Figure.Name, b.Points, strings.Join(b.Labels, ", "))
	if csvPath != "" {
		if err := os.WriteFile(csvPath, b.CSV, 0o644); err != nil {
			return fmt.Errorf("--csv: %w", err)
		}
		fmt.Fprintf(w, "wrote %s\n", csvPath)
	}
	return nil
}
