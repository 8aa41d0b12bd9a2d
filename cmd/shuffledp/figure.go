package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/shuffledp/shuffledp/figures"
	"github.com/shuffledp/shuffledp/statedir"
)

func init() { rootCmd.AddCommand(newFigureCmd()) }

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
				return figures.WriteList(cmd.OutOrStdout())
			}
			if args[0] == figures.RatiosName {
				return writeRatios(cmd.OutOrStdout(), csvPath)
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

// writeRatios prints the headline-ratio table (figures.WriteRatios) on w,
// and writes it as CSV to csvPath when set.
func writeRatios(w io.Writer, csvPath string) error {
	if err := statedir.CheckOutputFiles("csv", csvPath); err != nil {
		return err
	}
	var csv bytes.Buffer
	var csvOut io.Writer // nil: no CSV
	if csvPath != "" {
		csvOut = &csv
	}
	if err := figures.WriteRatios(w, figures.AllBounds(), csvOut); err != nil || csvPath == "" {
		return err
	}
	return writeOutput(w, "csv", csvPath, csv.Bytes())
}

// writeFigure computes the named figure at points x values (figures.Build),
// writes its image to out (and its series as CSV to csvPath, when set) and
// says so on w.
func writeFigure(w io.Writer, name, out, csvPath string, points int) error {
	format, err := figures.CheckBuild(name, out, points)
	if err != nil {
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
	if csvPath == "" {
		return nil
	}
	return writeOutput(w, "csv", csvPath, b.CSV)
}

// writeOutput writes data to the file path of the flag --name and says so
// on w.
func writeOutput(w io.Writer, name, path string, data []byte) error {
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("--%s: %w", name, err)
	}
	fmt.Fprintf(w, "wrote %s\n", path)
	return nil
}
