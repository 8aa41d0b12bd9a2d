package figures

import (
	"bytes"
	"encoding/csv"
	"image/png"
	"math"
	"strconv"
	"strings"
	"testing"
)

// powerBound is a synthetic bound eps = c·x^p for testing the data layer.
type powerBound struct {
	label string
	upper bool
	c, p  float64
}

func (b powerBound) Label() string { return b.label }
func (b powerBound) Upper() bool   { return b.upper }
func (b powerBound) Epsilon(s Setting) (float64, error) {
	return b.c * math.Pow(float64(s.Steps), b.p), nil
}

func TestListAndLookup(t *testing.T) {
	figs := List()
	if len(figs) != 9 {
		t.Fatalf("want 9 panels (Fig. 2, 4, 5 a-c), got %d", len(figs))
	}
	for _, f := range figs {
		g, err := Lookup(f.Name)
		if err != nil || g.Name != f.Name {
			t.Errorf("Lookup(%q) = %v, %v", f.Name, g.Name, err)
		}
		if f.Delta != 1e-8 {
			t.Errorf("%s: delta %g, the papers use 1e-8", f.Name, f.Delta)
		}
		xs, err := f.XValues(5)
		if err != nil || len(xs) < 2 {
			t.Fatalf("%s: XValues = %v, %v", f.Name, xs, err)
		}
		for i := 1; i < len(xs); i++ {
			if xs[i] <= xs[i-1] {
				t.Errorf("%s: x values not increasing: %v", f.Name, xs)
			}
		}
		s := f.SettingAt(xs[0])
		if s.K < 1 || s.K > s.N {
			t.Errorf("%s: bad setting %+v", f.Name, s)
		}
	}
	if f, err := Lookup("fig2a"); err != nil || f.Eps0 != 2 || f.N != 1000000 || f.Gamma != 0.001 {
		t.Errorf("fig2a = %+v, %v", f, err)
	}
	if _, err := Lookup("fig9z"); err == nil || !strings.Contains(err.Error(), "figure") {
		t.Errorf("unknown figure: %v", err)
	}
	for _, p := range []int{1, MaxPoints + 1, 100000} {
		if _, err := figs[0].XValues(p); err == nil || !strings.Contains(err.Error(), "points") {
			t.Errorf("points=%d: %v", p, err)
		}
	}
	if xs, err := figs[0].XValues(MaxPoints); err != nil || len(xs) < 2 || len(xs) > MaxPoints {
		t.Errorf("points=MaxPoints: %d values, %v", len(xs), err)
	}
}

func TestComputeBestAndCSV(t *testing.T) {
	f, _ := Lookup("fig2a")
	xs := []int64{1, 10, 100, 1000}
	bounds := []Bound{
		powerBound{"a", true, 1, 0.5},
		powerBound{"b", true, 0.1, 1},
		powerBound{"lower", false, 0.01, 0.5},
	}
	d, err := Compute(f, xs, bounds)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Series) != 4 || d.Series[3].Label != BestLabel {
		t.Fatalf("series %+v", d.Series)
	}
	for i, x := range xs {
		want := math.Min(math.Sqrt(float64(x)), 0.1*float64(x))
		if d.Series[3].Y[i] != want {
			t.Errorf("best at %d = %g, want %g (lower bounds must not enter)", x, d.Series[3].Y[i], want)
		}
	}
	var buf bytes.Buffer
	if err := d.WriteCSV(&buf); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(recs[0], ",") != "T,a,b,lower,best" || len(recs) != len(xs)+1 {
		t.Fatalf("csv %v", recs)
	}
	if v, _ := strconv.ParseFloat(recs[4][2], 64); v != 100 {
		t.Errorf("b at T=1000 = %v, want 100", recs[4][2])
	}
}

func TestRenderPNGAndSVG(t *testing.T) {
	f, _ := Lookup("fig5b")
	d, err := Compute(f, []int64{1, 100, 10000}, []Bound{
		powerBound{"neurips21-upper", true, 0.01, 0.5},
		powerBound{FMT20KOV15Label, true, 0.02, 0.6},
	})
	if err != nil {
		t.Fatal(err)
	}
	var img bytes.Buffer
	if err := d.Render(&img, "png"); err != nil {
		t.Fatal(err)
	}
	m, err := png.Decode(&img)
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	if b := m.Bounds(); b.Dx() < 300 || b.Dy() < 200 {
		t.Errorf("PNG too small: %v", b)
	}
	var svg bytes.Buffer
	if err := d.Render(&svg, "svg"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<svg", "neurips21-upper", FMT20KOV15Label, BestLabel} {
		if !strings.Contains(svg.String(), want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
	if _, err := FormatOf("x.pdf"); err == nil || !strings.Contains(err.Error(), "out") {
		t.Errorf("FormatOf(x.pdf) = %v", err)
	}
}

// The approximate-DP series at a fig2a point equals approxdp's pipeline, and
// caching across T does not change values.
func TestFMT20KOV15Bound(t *testing.T) {
	b := NewFMT20KOV15()
	s := Setting{N: 100000, K: 100, Eps0: 2, Steps: 1000, Delta: 1e-8}
	e1, err := b.Epsilon(s)
	if err != nil {
		t.Fatal(err)
	}
	s2 := s
	s2.Steps = 10
	if _, err := b.Epsilon(s2); err != nil {
		t.Fatal(err)
	}
	e2, _ := b.Epsilon(s)
	if e1 != e2 || !(e1 > 0) {
		t.Errorf("cached %g vs fresh %g", e2, e1)
	}
	if _, err := b.Epsilon(Setting{N: 10, K: 100, Eps0: 2, Steps: 1, Delta: 1e-8}); err == nil || !strings.Contains(err.Error(), "k") {
		t.Errorf("k > n: %v", err)
	}
}

func TestRatiosTable(t *testing.T) {
	bounds := []Bound{
		powerBound{"neurips21-upper", true, 1e-3, 0.5},
		powerBound{FMT20KOV15Label, true, 1e-2, 0.5},
	}
	rows, missing, err := Ratios(bounds)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || len(missing) != 5 {
		t.Fatalf("rows %d missing %v", len(rows), missing)
	}
	for _, r := range rows {
		if math.Abs(r.Measured-10) > 1e-9 {
			t.Errorf("measured %g, want 10", r.Measured)
		}
	}
	var txt, c bytes.Buffer
	if err := WriteRatiosText(&txt, rows); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(txt.String(), "14x") || !strings.Contains(txt.String(), "10x") {
		t.Errorf("text table:\n%s", txt.String())
	}
	if err := WriteRatiosCSV(&c, rows); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&c).ReadAll()
	if err != nil || len(recs) != 3 {
		t.Fatalf("csv %v %v", recs, err)
	}
}
