package figures

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"github.com/shuffledp/shuffledp/metrics"
)

// MetricsPlot describes an accuracy-against-epsilon plot of training runs'
// metrics files (JSON lines of metrics.Record), as `shuffledp train plot`
// takes it.
type MetricsPlot struct {
	// Files are the metrics files, one series each.
	Files []string `flag:"metrics" metavar:"FILE" usage:"JSONL metrics FILE written by shuffledp train --metrics (repeatable)"`
	// Labels, when given, label the files one for one; otherwise a series
	// is labelled by its run's parameters (randomizer, eps0, k, C), or by
	// the file's base name when its records do not carry them.
	Labels []string `flag:"label" usage:"legend label for the corresponding --metrics file (repeatable)"`
	// References name entries of References to overlay.
	References []string `flag:"reference" usage:"overlay a paper's stated accuracies with their std (repeatable): one of References"`
	// Title, X, MaxX and EMA are those of AccuracyPlot.
	Title string  `flag:"title" default:"CLDP-SGD on MNIST: test accuracy vs epsilon" usage:"plot title"`
	X     string  `flag:"x" default:"epsilon" usage:"x axis: epsilon (the run's best bound) or epsilon_neurips21 (NeurIPS'21 Thm 1 alone, the paper's accounting)"`
	MaxX  float64 `flag:"max-epsilon" usage:"leave out evaluations with epsilon above this, >= 0 (0 = keep all)"`
	EMA   bool    `flag:"ema" usage:"also draw the accuracy of the averaged parameters (test_accuracy_ema), dashed"`
	// ApproxDP > 0 adds, for each check-in Gaussian run, the approximate-DP
	// route's series at this many evaluations (ApproxDPSeries).
	ApproxDP int `flag:"approx-dp" usage:"for check-in Gaussian runs, also draw the accuracy against the approximate-DP route's epsilon of the same rounds (analytic Gaussian LDP, FMT20 clones, check-in amplification, KOV15) under the run's adjacency (sensitivity 2C for replace-one, C for zero-out and for metrics without an adjacency; a zero-out run also under 2C, the paper's Sec. 5.1 convention) at this many evenly spaced evaluations (0 = off)"`
}

// Build checks m (one label per file, MaxX finite and ≥ 0, known
// references) before reading anything, then reads every metrics file and
// returns the AccuracyPlot to draw. Errors name the flag of train plot.
func (m MetricsPlot) Build() (AccuracyPlot, error) {
	if len(m.Labels) > 0 && len(m.Labels) != len(m.Files) {
		return AccuracyPlot{}, fmt.Errorf("label: give one --label per --metrics file (%d files, %d labels)", len(m.Files), len(m.Labels))
	}
	if !(m.MaxX >= 0) || math.IsInf(m.MaxX, 1) {
		return AccuracyPlot{}, fmt.Errorf("--max-epsilon must be finite and >= 0 (0 keeps all), got %g", m.MaxX)
	}
	a := AccuracyPlot{Title: m.Title, X: m.X, MaxX: m.MaxX, EMA: m.EMA}
	for _, name := range m.References {
		r, ok := References[name]
		if !ok {
			return AccuracyPlot{}, fmt.Errorf("reference must be one of %s, got %q", strings.Join(ReferenceNames(), ", "), name)
		}
		a.References = append(a.References, r...)
	}
	for i, file := range m.Files {
		series, err := m.series(i, file)
		if err != nil {
			return AccuracyPlot{}, err
		}
		a.Series = append(a.Series, series...)
	}
	return a, nil
}

// series reads the i-th metrics file and returns its series and, with
// ApproxDP, the approximate-DP route's.
func (m MetricsPlot) series(i int, file string) ([]AccuracySeries, error) {
	recs, err := metrics.Read(file)
	if err != nil {
		return nil, err
	}
	label := filepath.Base(file)
	if len(m.Labels) > 0 {
		label = m.Labels[i]
	} else if len(recs) > 0 && recs[len(recs)-1].Randomizer != "" {
		r := recs[len(recs)-1]
		label = fmt.Sprintf("%s, eps0=%g, k=%d, C=%g", r.Randomizer, r.Eps0, r.Sample, r.Clip)
	}
	series := []AccuracySeries{{Label: label, Records: recs}}
	if m.ApproxDP > 0 {
		s, err := ApproxDPSeries(recs, m.ApproxDP)
		if err != nil {
			return nil, err
		}
		series = append(series, s...)
	}
	return series, nil
}
