package figures

import (
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"gonum.org/v1/plot/vg"
)

// FlagUsage implements cliflag.Usager: --reference lists ReferenceNames.
func (*MetricsPlot) FlagUsage(name string) string {
	if name == "reference" {
		return "overlay a paper's stated accuracies with their std (repeatable): " + strings.Join(ReferenceNames(), ", ")
	}
	return ""
}

// Save builds m's plot (Build) and saves it to out, 6 by 4 inches, as PNG,
// SVG or PDF by out's extension. Errors name --out.
func (m MetricsPlot) Save(out string) error {
	a, err := m.Build()
	if err != nil {
		return err
	}
	p, err := a.Plot()
	if err != nil {
		return err
	}
	if err := p.Save(6*vg.Inch, 4*vg.Inch, out); err != nil {
		return fmt.Errorf("out: %w", err)
	}
	return nil
}

// SaveFrontier reads the frontier table in the file path (ReadFrontier),
// titles it and saves its plot to out, 7 by 4.5 inches. Errors name
// --frontier and --out.
func SaveFrontier(path, title, out string) error {
	in, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("frontier: %w", err)
	}
	defer in.Close()
	fr, err := ReadFrontier(in)
	if err != nil {
		return err
	}
	fr.Title = title
	p, err := fr.Plot()
	if err != nil {
		return err
	}
	if err := p.Save(7*vg.Inch, 4.5*vg.Inch, out); err != nil {
		return fmt.Errorf("out: %w", err)
	}
	return nil
}

// RatiosName is the name `shuffledp figure` gives the headline-ratio
// table (WriteRatios) beside the figures of List.
const RatiosName = "ratios"

// WriteList lists the figures of List with their captions, then
// RatiosName, as a two-column table.
func WriteList(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, f := range List() {
		fmt.Fprintf(tw, "%s\t%s\n", f.Name, f.Caption)
	}
	fmt.Fprintf(tw, "%s\t%s\n", RatiosName, "headline ratios of the papers next to what we measure (text; --csv for CSV)")
	return tw.Flush()
}

// WriteRatios computes the headline ratios over bounds (Ratios) and
// writes their table to w (WriteRatiosText), with a line for each bound
// that was not available; with csv not nil, the table as CSV to csv too.
func WriteRatios(w io.Writer, bounds []Bound, csv io.Writer) error {
	rows, missing, err := Ratios(bounds)
	if err != nil {
		return err
	}
	if err := WriteRatiosText(w, rows); err != nil {
		return err
	}
	for _, m := range missing {
		fmt.Fprintf(w, "not evaluated (bound not available): %s\n", m)
	}
	if csv == nil {
		return nil
	}
	return WriteRatiosCSV(csv, rows)
}

// CheckBuild checks, before anything is computed, what `shuffledp figure
// NAME --out FILE` needs: a known figure name (Lookup), an output file
// (required) whose extension names a format (FormatOf) and a number of
// points CheckPoints accepts. It returns the format. Errors name --out.
func CheckBuild(name, out string, points int) (string, error) {
	if _, err := Lookup(name); err != nil {
		return "", err
	}
	if out == "" {
		return "", fmt.Errorf("--out is required (FILE.png or FILE.svg)")
	}
	format, err := FormatOf(out)
	if err != nil {
		return "", err
	}
	return format, CheckPoints(points)
}
