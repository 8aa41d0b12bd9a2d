package figures

import (
	"bufio"
	"fmt"
	"image/color"
	"io"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// Frontier is a plot of accuracy against epsilon on a logarithmic epsilon
// axis: one marked line per method (each point a mean over seeds, with its
// standard deviation as an error bar) and horizontal lines for references
// without an epsilon (the non-private model).
type Frontier struct {
	Title  string
	Series []FrontierSeries
	Lines  []FrontierLine
}

// FrontierSeries is one method's points, drawn in the order given.
type FrontierSeries struct {
	Label  string
	Points []ReferencePoint
}

// FrontierLine is an accuracy drawn across the whole epsilon axis.
type FrontierLine struct {
	Label    string
	Accuracy float64
}

// ReadFrontier reads a frontier table: tab-separated lines
//
//	point<TAB>SERIES<TAB>EPSILON<TAB>ACCURACY<TAB>STD
//	line<TAB>LABEL<TAB>-<TAB>ACCURACY<TAB>STD
//
// ('#' comments and blank lines skipped; accuracies in [0, 1]). Points of
// one series keep the table's order; series and lines the order of their
// first appearance.
func ReadFrontier(r io.Reader) (Frontier, error) {
	var f Frontier
	index := map[string]int{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cols := strings.Split(line, "\t")
		if len(cols) != 5 {
			return f, fmt.Errorf("frontier line %d: want 5 tab-separated columns (kind, label, epsilon, accuracy, std), got %d", n, len(cols))
		}
		acc, err1 := strconv.ParseFloat(cols[3], 64)
		std, err2 := strconv.ParseFloat(cols[4], 64)
		if err1 != nil || err2 != nil || !(acc >= 0 && acc <= 1) || !(std >= 0) || math.IsInf(std, 0) {
			return f, fmt.Errorf("frontier line %d: accuracy must be in [0, 1] and std finite >= 0, got %q and %q", n, cols[3], cols[4])
		}
		switch cols[0] {
		case "point":
			eps, err := strconv.ParseFloat(cols[2], 64)
			if err != nil || !(eps > 0) || math.IsInf(eps, 0) {
				return f, fmt.Errorf("frontier line %d: epsilon must be finite and > 0 (log axis), got %q", n, cols[2])
			}
			i, ok := index[cols[1]]
			if !ok {
				i = len(f.Series)
				index[cols[1]] = i
				f.Series = append(f.Series, FrontierSeries{Label: cols[1]})
			}
			f.Series[i].Points = append(f.Series[i].Points, ReferencePoint{Epsilon: eps, Accuracy: acc, Std: std})
		case "line":
			f.Lines = append(f.Lines, FrontierLine{Label: cols[1], Accuracy: acc})
		default:
			return f, fmt.Errorf("frontier line %d: kind must be point or line, got %q", n, cols[0])
		}
	}
	if err := sc.Err(); err != nil {
		return f, err
	}
	if len(f.Series) == 0 {
		return f, fmt.Errorf("frontier: no point")
	}
	return f, nil
}

// Plot builds the plot: log epsilon axis, accuracy axis from just below
// the lowest point (error bar included) to 1.
func (f Frontier) Plot() (*plot.Plot, error) {
	if len(f.Series) == 0 {
		return nil, fmt.Errorf("frontier: no point")
	}
	p := plot.New()
	p.Title.Text = f.Title
	p.Title.TextStyle.Font.Size = vg.Points(9)
	p.X.Label.Text = "epsilon (log scale)"
	p.Y.Label.Text = "test accuracy"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Add(plotter.NewGrid())
	lo, xmin, xmax := 1.0, math.Inf(1), math.Inf(-1)
	for i, s := range f.Series {
		var pts plotter.XYs
		var errs plotter.YErrors
		for _, q := range s.Points {
			pts = append(pts, plotter.XY{X: q.Epsilon, Y: q.Accuracy})
			errs = append(errs, struct{ Low, High float64 }{q.Std, q.Std})
			lo = min(lo, q.Accuracy-q.Std)
			xmin, xmax = min(xmin, q.Epsilon), max(xmax, q.Epsilon)
		}
		line, err := plotter.NewLine(pts)
		if err != nil {
			return nil, fmt.Errorf("series %s: %w", s.Label, err)
		}
		line.Color = plotutil.Color(i)
		// Past the palette's colours a series repeats one: it is told
		// apart by a dash pattern (and its marker shape).
		line.Dashes = plotutil.Dashes(i / len(plotutil.DefaultColors))
		line.Width = vg.Points(1.2)
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return nil, err
		}
		sc.Color = line.Color
		sc.Shape = plotutil.Shape(i)
		sc.Radius = vg.Points(3)
		eb, err := plotter.NewYErrorBars(struct {
			plotter.XYer
			plotter.YErrorer
		}{pts, errs})
		if err != nil {
			return nil, err
		}
		eb.Color = line.Color
		p.Add(line, sc, eb)
		p.Legend.Add(s.Label, line, sc)
	}
	for j, l := range f.Lines {
		lo = min(lo, l.Accuracy)
		pts := plotter.XYs{{X: xmin / 2, Y: l.Accuracy}, {X: xmax * 2, Y: l.Accuracy}}
		line, err := plotter.NewLine(pts)
		if err != nil {
			return nil, err
		}
		line.Color = color.Gray{Y: uint8(40 + 60*(j%3))}
		line.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		line.Width = vg.Points(1.2)
		p.Add(line)
		p.Legend.Add(l.Label, line)
	}
	p.X.Min, p.X.Max = xmin/2, xmax*2
	p.Y.Min, p.Y.Max = math.Max(0, math.Floor((lo-0.01)*50)/50), 1
	p.Legend.Top, p.Legend.Left = false, false
	p.Legend.TextStyle.Font.Size = vg.Points(8)
	return p, nil
}
