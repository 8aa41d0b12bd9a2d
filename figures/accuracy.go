package figures

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"slices"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/shuffledp/shuffledp/metrics"
)

// Epsilon axes of an accuracy plot: the metrics field on the x axis.
const (
	// AxisEpsilon is the run's epsilon (the ledger's best bound).
	AxisEpsilon = "epsilon"
	// AxisEpsilonNeurIPS21 is NeurIPS'21 Theorem 1 alone over the same
	// rounds, the paper's own accounting: compare with the paper here.
	AxisEpsilonNeurIPS21 = "epsilon_neurips21"
)

// ReferencePoint is an accuracy a paper reports at an epsilon, with its
// standard deviation over the paper's seeds (0 if none is given).
type ReferencePoint struct {
	Epsilon, Accuracy, Std float64
}

// Reference is a named set of a paper's reported points.
type Reference struct {
	// Label names the source in the legend.
	Label  string
	Points []ReferencePoint
}

// References are the accuracies the papers state in their text (the
// curves themselves are not published as data). Each name lists the
// paper's method first and, where the text gives it, the baseline it
// compares with, at the paper's own accounting (AxisEpsilonNeurIPS21 for
// the NeurIPS'21 figures).
var References = map[string][]Reference{
	// NeurIPS'21 Sec. 5 (arXiv Sec. 4): "80% (±1.8) with a total privacy
	// budget of ε = 1.4 ... 90% (±0.5) with ε = 2.91"; FMT20 with strong
	// composition: 70.7% (±2.1) at 1.4, 90% at 4.82. Means over 10 runs.
	"neurips21-fig3": {
		{Label: "NeurIPS'21 Fig. 3 (Thm 1)", Points: []ReferencePoint{{1.4, 0.80, 0.018}, {2.91, 0.90, 0.005}}},
		{Label: "NeurIPS'21 Fig. 3: FMT20 + strong comp.", Points: []ReferencePoint{{1.4, 0.707, 0.021}, {4.82, 0.90, 0}}},
	},
	// NeurIPS'21 supplement Sec. E (arXiv Sec. 4): "81.15% (±0.7) with
	// ε = 3 ... 89.7% (±0.5) with ε = 5.8"; FMT20: 76.46% (±1.9) at 3,
	// 89.7% at 18.3. Means over 4 runs.
	"neurips21-fig6": {
		{Label: "NeurIPS'21 Fig. 6 (Thm 1)", Points: []ReferencePoint{{3, 0.8115, 0.007}, {5.8, 0.897, 0.005}}},
		{Label: "NeurIPS'21 Fig. 6: FMT20 + strong comp.", Points: []ReferencePoint{{3, 0.7646, 0.019}, {18.3, 0.897, 0}}},
	},
}

// ReferenceNames lists the keys of References, sorted.
func ReferenceNames() []string {
	names := make([]string, 0, len(References))
	for n := range References {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// AccuracySeries is one run's curve: test (or validation) accuracy against
// epsilon.
type AccuracySeries struct {
	Label   string
	Records []metrics.Record
}

// AccuracyPlot describes a plot of accuracy against epsilon from training
// metrics, with a paper's reported points overlaid.
type AccuracyPlot struct {
	Title string
	// X is AxisEpsilon (default) or AxisEpsilonNeurIPS21.
	X string
	// MaxX leaves out evaluations with an epsilon above it (0 keeps all).
	MaxX float64
	// EMA adds, for every series whose records carry it, the accuracy of
	// the averaged parameters as a dashed curve of the same colour.
	EMA    bool
	Series []AccuracySeries
	// References are drawn as points with error bars.
	References []Reference
}

// Plot builds the plot; Save it with gonum's plot.Save.
func (a AccuracyPlot) Plot() (*plot.Plot, error) {
	if len(a.Series) == 0 {
		return nil, errors.New("metrics: give at least one series")
	}
	axis := a.X
	if axis == "" {
		axis = AxisEpsilon
	}
	if axis != AxisEpsilon && axis != AxisEpsilonNeurIPS21 {
		return nil, fmt.Errorf("x must be %s or %s, got %q", AxisEpsilon, AxisEpsilonNeurIPS21, a.X)
	}
	if !(a.MaxX >= 0) || math.IsInf(a.MaxX, 1) {
		return nil, fmt.Errorf("max-epsilon must be finite and >= 0 (0 keeps all), got %g", a.MaxX)
	}
	p := plot.New()
	p.Title.Text = a.Title
	p.X.Label.Text = axis + " (delta as in the metrics)"
	if axis == AxisEpsilonNeurIPS21 {
		p.X.Label.Text = "epsilon, NeurIPS'21 Thm 1 (the paper's accounting)"
	}
	set, err := evalSet(a.Series)
	if err != nil {
		return nil, err
	}
	p.Y.Label.Text = set + " accuracy"
	p.Y.Min, p.Y.Max = 0, 1
	p.Add(plotter.NewGrid())
	for i, s := range a.Series {
		raw, ema := accuracyXYs(s.Records, axis, a.MaxX)
		if len(raw) == 0 {
			return nil, fmt.Errorf("metrics: %s has no record with both %s and an accuracy (randomizer none has no epsilon)", s.Label, axis)
		}
		line, err := plotter.NewLine(raw)
		if err != nil {
			return nil, err
		}
		line.Color = plotutil.Color(i)
		line.Width = vg.Points(1.5)
		p.Add(line)
		p.Legend.Add(s.Label, line)
		if a.EMA && len(ema) > 0 {
			el, err := plotter.NewLine(ema)
			if err != nil {
				return nil, err
			}
			el.Color = plotutil.Color(i)
			el.Width = vg.Points(1.5)
			el.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
			p.Add(el)
			p.Legend.Add(s.Label+" (EMA)", el)
		}
	}
	for j, ref := range a.References {
		var pts plotter.XYs
		var errs plotter.YErrors
		for _, q := range ref.Points {
			if a.MaxX > 0 && q.Epsilon > a.MaxX {
				continue
			}
			pts = append(pts, plotter.XY{X: q.Epsilon, Y: q.Accuracy})
			errs = append(errs, struct{ Low, High float64 }{q.Std, q.Std})
		}
		if len(pts) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return nil, err
		}
		sc.Shape = []draw.GlyphDrawer{draw.BoxGlyph{}, draw.TriangleGlyph{}, draw.CrossGlyph{}}[j%3]
		sc.Color = color.Black
		sc.Radius = vg.Points(3.5)
		p.Add(sc)
		eb, err := plotter.NewYErrorBars(struct {
			plotter.XYer
			plotter.YErrorer
		}{pts, errs})
		if err != nil {
			return nil, err
		}
		eb.Color = color.Black
		p.Add(eb)
		p.Legend.Add(ref.Label, sc)
	}
	p.Legend.Top, p.Legend.Left = false, false
	p.Legend.YOffs = vg.Points(20)
	return p, nil
}

// accuracyXYs returns the (epsilon, accuracy) points of the raw and of the
// averaged parameters, in record order, skipping records without either.
func accuracyXYs(recs []metrics.Record, axis string, maxX float64) (raw, ema plotter.XYs) {
	for _, r := range recs {
		x := r.Epsilon
		if axis == AxisEpsilonNeurIPS21 {
			x = r.EpsilonNeurIPS21
		}
		if x == nil || (maxX > 0 && *x > maxX) {
			continue
		}
		if r.TestAccuracy != nil {
			raw = append(raw, plotter.XY{X: *x, Y: *r.TestAccuracy})
		}
		if r.TestAccuracyEMA != nil {
			ema = append(ema, plotter.XY{X: *x, Y: *r.TestAccuracyEMA})
		}
	}
	return raw, ema
}

// evalSet returns "validation" if every series was evaluated on a
// validation split, "test" if none was, and an error for a mixture (their
// accuracies are not comparable on one axis).
func evalSet(series []AccuracySeries) (string, error) {
	validation := 0
	for _, s := range series {
		if slices.ContainsFunc(s.Records, func(r metrics.Record) bool { return r.EvalSet == "validation" }) {
			validation++
		}
	}
	switch validation {
	case 0:
		return "test", nil
	case len(series):
		return "validation", nil
	}
	return "", fmt.Errorf("metrics: %d of %d files evaluate on a validation split, the others on the test set; plot them apart", validation, len(series))
}
