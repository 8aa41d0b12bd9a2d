package figures

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
)

// Bound is one labelled line of a figure: an (eps, delta) bound for T
// rounds of subsampled shuffling.
type Bound interface {
	// Label names the line (also the CSV column).
	Label() string
	// Upper says whether the bound is a valid upper bound on epsilon (lower
	// bounds are drawn for reference but never enter "best").
	Upper() bool
	// Epsilon returns the bound's epsilon at the setting.
	Epsilon(s Setting) (float64, error)
}

// BestLabel names the derived series: at every x the minimum over the
// upper-bound series of the figure.
const BestLabel = "best"

// Series is one line: Y[i] is the epsilon at X[i].
type Series struct {
	Label string
	Upper bool
	// Kind is accounting.KindCertifiedLower for a certified lower bound on
	// the mechanism's epsilon; "" otherwise (an upper bound when Upper, else
	// a lower bound on the RDP curve, accounting.KindRDPLower).
	Kind string
	Y    []float64
}

// Data is a computed figure.
type Data struct {
	Figure Figure
	X      []int64
	Series []Series // in the order of the bounds, then "best"
}

// Compute evaluates every bound at every x and appends the "best" series
// (pointwise minimum over the upper bounds) when there are any upper bounds.
func Compute(f Figure, xs []int64, bounds []Bound) (Data, error) {
	if len(xs) == 0 {
		return Data{}, fmt.Errorf("figure %s: no x values", f.Name)
	}
	d := Data{Figure: f, X: xs}
	best := Series{Label: BestLabel, Upper: true, Y: make([]float64, len(xs))}
	for i := range best.Y {
		best.Y[i] = math.Inf(1)
	}
	haveUpper := false
	for _, b := range bounds {
		s := Series{Label: b.Label(), Upper: b.Upper(), Y: make([]float64, len(xs))}
		if k, ok := b.(interface{ Kind() string }); ok {
			s.Kind = k.Kind()
		}
		for i, x := range xs {
			e, err := b.Epsilon(f.SettingAt(x))
			if err != nil {
				return Data{}, fmt.Errorf("figure %s, bound %s, %s=%d: %w", f.Name, b.Label(), f.Axis, x, err)
			}
			if math.IsNaN(e) || math.IsInf(e, 0) || e < 0 {
				return Data{}, fmt.Errorf("figure %s, bound %s, %s=%d: invalid epsilon %g", f.Name, b.Label(), f.Axis, x, e)
			}
			s.Y[i] = e
			if b.Upper() && e < best.Y[i] {
				best.Y[i] = e
			}
		}
		haveUpper = haveUpper || b.Upper()
		d.Series = append(d.Series, s)
	}
	if haveUpper {
		d.Series = append(d.Series, best)
	}
	return d, nil
}

// WriteCSV writes one row per x: the x value, then each series' epsilon
// (17 significant digits), with a header naming the axis and the series.
func (d Data) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	head := []string{string(d.Figure.Axis)}
	for _, s := range d.Series {
		head = append(head, s.Label)
	}
	if err := cw.Write(head); err != nil {
		return err
	}
	for i, x := range d.X {
		row := []string{strconv.FormatInt(x, 10)}
		for _, s := range d.Series {
			row = append(row, strconv.FormatFloat(s.Y[i], 'g', 17, 64))
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// AllBounds lists the lines drawn in every figure: the RDP bounds of the
// accountant (RDPBounds), the approximate-DP baselines (FMT20 clones
// with KOV15 composition, closed form and numerical) and the PLD bounds.
func AllBounds() []Bound {
	return append(append(RDPBounds(), NewFMT20KOV15(), NewFMT20AnalyticKOV15()), PLDBounds()...)
}

// CheckPoints refuses a number of x values outside [2, MaxPoints], naming
// the flag --points.
func CheckPoints(points int) error {
	if points < 2 || points > MaxPoints {
		return fmt.Errorf("--points must be between 2 and %d, got %d", MaxPoints, points)
	}
	return nil
}

// Built is a figure computed and rendered by Build.
type Built struct {
	Figure Figure
	// Image is the figure in the format asked for; CSV its series, when
	// asked for.
	Image, CSV []byte
	// Points is the number of x values; Labels the series' labels.
	Points int
	Labels []string
}

// Build computes the named figure at points log-spaced x values (2 to
// MaxPoints) over AllBounds and renders it in format (FormatOf), with its
// series as CSV when withCSV. Errors name the flag --points.
func Build(name string, points int, format string, withCSV bool) (Built, error) {
	fig, err := Lookup(name)
	if err != nil {
		return Built{}, err
	}
	if err := CheckPoints(points); err != nil {
		return Built{}, err
	}
	xs, err := fig.XValues(points)
	if err != nil {
		return Built{}, err
	}
	d, err := Compute(fig, xs, AllBounds())
	if err != nil {
		return Built{}, err
	}
	b := Built{Figure: fig, Points: len(xs)}
	var img, tab bytes.Buffer
	if err := d.Render(&img, format); err != nil {
		return Built{}, err
	}
	b.Image = img.Bytes()
	if withCSV {
		if err := d.WriteCSV(&tab); err != nil {
			return Built{}, err
		}
		b.CSV = tab.Bytes()
	}
	for _, s := range d.Series {
		b.Labels = append(b.Labels, s.Label)
	}
	return b, nil
}
