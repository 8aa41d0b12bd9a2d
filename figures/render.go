package figures

import (
	"fmt"
	"image/color"
	"io"
	"path/filepath"
	"strings"

	"github.com/shuffledp/shuffledp/accounting"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Formats maps the file extensions Render accepts to gonum/plot formats.
var Formats = map[string]string{".png": "png", ".svg": "svg"}

// style gives each known series the colour of the paper's figure (blue:
// Thm 1 upper, red: Thm 2 lower, black: CCS'21 + WBK19, magenta: FMT20 +
// KOV15) and "best" a dashed green line.
func style(label string, i int) (color.Color, []vg.Length) {
	switch label {
	case "neurips21-upper":
		return color.RGBA{B: 220, A: 255}, nil
	case "neurips21-lower":
		return color.RGBA{R: 220, A: 255}, nil
	case "ccs21+wbk19":
		return color.Black, nil
	case FMT20KOV15Label:
		return color.RGBA{R: 200, B: 200, A: 255}, nil
	case FMT20AnalyticKOV15Label:
		return color.RGBA{R: 200, B: 200, A: 255}, []vg.Length{vg.Points(2), vg.Points(2)}
	case BestLabel:
		return color.RGBA{G: 150, A: 255}, []vg.Length{vg.Points(6), vg.Points(3)}
	case PLDLabel:
		return color.RGBA{R: 30, G: 180, B: 230, A: 255}, nil
	case CertifiedLowerLabel:
		return color.RGBA{R: 120, G: 0, B: 0, A: 255}, []vg.Length{vg.Points(4), vg.Points(2)}
	case "rdp-best":
		return color.RGBA{R: 230, G: 140, A: 255}, []vg.Length{vg.Points(1), vg.Points(3)}
	}
	palette := []color.Color{
		color.RGBA{R: 230, G: 140, A: 255}, color.RGBA{G: 160, B: 160, A: 255},
		color.RGBA{R: 120, G: 80, B: 40, A: 255}, color.Gray{Y: 120},
	}
	return palette[i%len(palette)], []vg.Length{vg.Points(2), vg.Points(2)}
}

// Plot builds the gonum plot of d: log-log axes, one labelled line per
// series. Non-positive values cannot be drawn on a log axis and are left out
// of the line (they stay in the CSV).
func (d Data) Plot() (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = d.Figure.Caption
	p.Title.TextStyle.Font.Size = vg.Points(9)
	p.X.Label.Text = d.Figure.XLabel()
	p.Y.Label.Text = fmt.Sprintf("epsilon (delta = %g)", d.Figure.Delta)
	p.X.Scale = plot.LogScale{}
	p.Y.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Add(plotter.NewGrid())
	// Lines rise with T and fall with n, so the emptiest corner is bottom
	// right for eps-vs-T panels and bottom left for eps-vs-n panels.
	p.Legend.Top = false
	p.Legend.Left = d.Figure.Axis == AxisClients
	p.Legend.XOffs = -vg.Points(8)
	if p.Legend.Left {
		p.Legend.XOffs = vg.Points(48)
	}
	p.Legend.YOffs = vg.Points(4)
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	drawn := 0
	for i, s := range d.Series {
		var pts plotter.XYs
		for j, x := range d.X {
			if y := s.Y[j]; y > 0 {
				pts = append(pts, plotter.XY{X: float64(x), Y: y})
			}
		}
		if len(pts) == 0 {
			continue
		}
		line, err := plotter.NewLine(pts)
		if err != nil {
			return nil, fmt.Errorf("series %s: %w", s.Label, err)
		}
		line.Color, line.Dashes = style(s.Label, i)
		line.Width = vg.Points(1.5)
		marks, err := plotter.NewScatter(pts)
		if err != nil {
			return nil, fmt.Errorf("series %s: %w", s.Label, err)
		}
		marks.Color = line.Color
		marks.Shape = draw.CircleGlyph{}
		marks.Radius = vg.Points(1.5)
		p.Add(line, marks)
		p.Legend.Add(legendLabel(s), line)
		drawn++
	}
	if drawn == 0 {
		return nil, fmt.Errorf("figure %s: no positive values to draw", d.Figure.Name)
	}
	return p, nil
}

// FormatOf returns the output format for a file name (by extension).
func FormatOf(path string) (string, error) {
	ext := strings.ToLower(filepath.Ext(path))
	f, ok := Formats[ext]
	if !ok {
		return "", fmt.Errorf("out must end in .png or .svg, got %q", path)
	}
	return f, nil
}

// Render writes d as an image in format "png" or "svg", 6 x 4.5 inches
// (PNG at gonum/plot's default resolution).
func (d Data) Render(w io.Writer, format string) error {
	p, err := d.Plot()
	if err != nil {
		return err
	}
	wt, err := p.WriterTo(6*vg.Inch, 4.5*vg.Inch, format)
	if err != nil {
		return err
	}
	_, err = wt.WriteTo(w)
	return err
}

// legendLabel is the legend text of a series: its label, and for a lower
// bound what it bounds. An RDP lower bound converted to (epsilon, delta)
// bounds what the RDP route can certify, not the mechanism's epsilon
// (accounting.KindRDPLower), so its legend says so; the CSV column keeps the
// bare label.
func legendLabel(s Series) string {
	switch {
	case s.Upper:
		return s.Label
	case s.Kind == accounting.KindCertifiedLower:
		return s.Label // its label says it
	}
	return s.Label + " (RDP-curve lower)"
}
