package main

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shuffledp/shuffledp/figures"
	"github.com/spf13/cobra"
)

func runFigure(t *testing.T, args ...string) (string, error) {
	t.Helper()
	return runCmd(t, newFigureCmd, args...)
}

func wantLabels() []string {
	var ls []string
	for _, b := range figures.AllBounds() {
		ls = append(ls, b.Label())
	}
	return append(ls, figures.BestLabel)
}

func TestFigureList(t *testing.T) {
	out, err := runFigure(t, "--list")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range figures.List() {
		if !strings.Contains(out, f.Name) {
			t.Errorf("--list lacks %s:\n%s", f.Name, out)
		}
	}
	if !strings.Contains(out, figures.RatiosName) {
		t.Errorf("--list lacks %s", figures.RatiosName)
	}
}

func TestFigurePNGAndCSV(t *testing.T) {
	t.Parallel() // CPU-bound: beside the package's other parallel tests, on both cores
	dir := t.TempDir()
	img, tab := filepath.Join(dir, "f.png"), filepath.Join(dir, "f.csv")
	if _, err := runFigure(t, "fig2a", "--out", img, "--csv", tab, "--points", "2"); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(img)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := png.Decode(f); err != nil {
		t.Fatalf("not a valid PNG: %v", err)
	}
	b, err := os.ReadFile(tab)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 {
		t.Fatalf("want header + 2 rows, got %d", len(recs))
	}
	if got, want := strings.Join(recs[0], ","), "T,"+strings.Join(wantLabels(), ","); got != want {
		t.Errorf("CSV header %q, want %q", got, want)
	}
}

func TestFigureSVGHasEverySeries(t *testing.T) {
	t.Parallel() // CPU-bound: beside the package's other parallel tests, on both cores
	img := filepath.Join(t.TempDir(), "f.svg")
	if _, err := runFigure(t, "neurips21-fig5c", "--out", img, "--points", "2"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(img)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if !strings.Contains(s, "<svg") {
		t.Fatal("not an SVG")
	}
	for _, l := range wantLabels() {
		if !strings.Contains(s, l) {
			t.Errorf("SVG lacks series %q", l)
		}
	}
}

func TestFigureBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"fig9z", "--out", filepath.Join(dir, "x.png")}, "figure"},
		{[]string{"fig2a", "--out", filepath.Join(dir, "x.pdf")}, "out"},
		{[]string{"fig2a"}, "--out"},
		{[]string{"fig2a", "--out", filepath.Join(dir, "x.png"), "--points", "1"}, "points"},
		{[]string{}, "NAME"},
	} {
		_, err := runFigure(t, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one naming %q", c.args, err, c.want)
		}
	}
}

// runFigureQuiet runs the figure command as main does (no usage or error
// text on failure) and returns what it printed.
func runFigureQuiet(t *testing.T, args ...string) (string, error) {
	t.Helper()
	return runCmd(t, func() *cobra.Command {
		c := newFigureCmd()
		c.SilenceUsage, c.SilenceErrors = true, true
		return c
	}, args...)
}

// TestFigureBadOutputPathWritesNothing checks every output path before any
// work: on a bad --out or --csv nothing is computed, written or printed, and
// the error names the flag.
func TestFigureBadOutputPathWritesNothing(t *testing.T) {
	for _, c := range []struct {
		args func(dir string) []string
		flag string
	}{
		{func(d string) []string {
			return []string{"fig2a", "--out", filepath.Join(d, "f.png"), "--csv", filepath.Join(d, "missing", "f.csv"), "--points", "2"}
		}, "--csv"},
		{func(d string) []string {
			return []string{"fig2a", "--out", filepath.Join(d, "missing", "f.png"), "--csv", filepath.Join(d, "f.csv"), "--points", "2"}
		}, "--out"},
		{func(d string) []string {
			return []string{"fig2a", "--out", filepath.Join(d, "f.png"), "--csv", d, "--points", "2"}
		}, "--csv"},
		{func(d string) []string {
			return []string{"fig2a", "--out", filepath.Join(d, "f.png"), "--csv", filepath.Join(d, "f.png"), "--points", "2"}
		}, "--csv"},
		{func(d string) []string { return []string{"ratios", "--csv", filepath.Join(d, "missing", "r.csv")} }, "--csv"},
	} {
		dir := t.TempDir()
		args := c.args(dir)
		out, err := runFigureQuiet(t, args...)
		if err == nil || !strings.Contains(err.Error(), c.flag) {
			t.Errorf("%v: error %v, want one naming %s", args, err, c.flag)
		}
		if out != "" {
			t.Errorf("%v: printed %q before failing", args, out)
		}
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			t.Errorf("%v: left %s behind", args, e.Name())
		}
	}
}

// TestFigurePointsLimit checks the documented upper limit on --points.
func TestFigurePointsLimit(t *testing.T) {
	img := filepath.Join(t.TempDir(), "f.png")
	for _, p := range []string{"100000", fmt.Sprint(figures.MaxPoints + 1)} {
		_, err := runFigure(t, "fig2a", "--out", img, "--points", p)
		if err == nil || !strings.Contains(err.Error(), "--points") || !strings.Contains(err.Error(), fmt.Sprint(figures.MaxPoints)) {
			t.Errorf("--points %s: error %v, want one naming --points and its limit %d", p, err, figures.MaxPoints)
		}
	}
	if _, err := os.Stat(img); !os.IsNotExist(err) {
		t.Errorf("%s written despite the bad --points", img)
	}
	help, err := runFigure(t, "--help")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(help, fmt.Sprintf("<= %d", figures.MaxPoints)) {
		t.Errorf("--help does not state the --points limit %d:\n%s", figures.MaxPoints, help)
	}
}
