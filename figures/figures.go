// Package figures computes and renders the privacy-accounting figures of the
// source papers: NeurIPS'21 (Girgis et al., "Renyi differential privacy of
// the subsampled shuffle model in distributed learning") Fig. 2 (a, b, c) and
// its supplement's Figs. 4 and 5 (a, b, c): epsilon at delta = 1e-8 after T
// rounds of "sample k of n clients, shuffle their eps0-LDP reports", as a
// function of T or of n, one labelled line per bound, log axes. It also
// tabulates the papers' headline ratios next to what we measure, and plots
// training runs' test accuracy against epsilon from their metrics records
// (AccuracyPlot over metrics.Record; with ApproxDPRecords and
// ApproxDPSeries, a check-in Gaussian run's accuracy against the
// approximate-DP route's epsilon of the same rounds).
//
// The data layer (Compute, WriteCSV) is separate from rendering (Render,
// gonum.org/v1/plot), so the numbers can be tested and exported without
// drawing.
package figures

import (
	"fmt"
	"math"
	"sort"
)

// Axis says what a figure varies along its x axis.
type Axis string

const (
	// AxisSteps varies the number of rounds T at fixed n and gamma = k/n.
	AxisSteps Axis = "T"
	// AxisClients varies the number of clients n at fixed k and T.
	AxisClients Axis = "n"
)

// Figure is one panel of the papers, with its exact settings.
type Figure struct {
	Name    string // e.g. "neurips21-fig2a"
	Caption string // the paper's caption for the panel
	Axis    Axis
	Eps0    float64
	Delta   float64
	// AxisSteps: N clients and sampling ratio Gamma fixed (k = Gamma·N);
	// T ranges over [TMin, TMax].
	N     int64
	Gamma float64
	TMin  int64
	TMax  int64
	// AxisClients: K clients per round and T rounds fixed; n ranges over
	// [NMin, NMax].
	K    int64
	T    int64
	NMin int64
	NMax int64
}

// Setting is one point of a figure: T rounds of k-of-n subsampled shuffling
// of an eps0-LDP randomizer, at target delta.
type Setting struct {
	N, K  int64
	Eps0  float64
	Steps int64
	Delta float64
}

const paperDelta = 1e-8

func stepsFigure(name, caption string, eps0, gamma float64, n int64) Figure {
	return Figure{Name: name, Caption: caption, Axis: AxisSteps, Eps0: eps0, Delta: paperDelta,
		N: n, Gamma: gamma, TMin: 1, TMax: 100000}
}

func clientsFigure(name, caption string, eps0 float64, k int64) Figure {
	// The papers do not print the n range of panels (c); we span n from
	// 100k to 1e5·k (gamma from 0.01 down to 1e-5).
	return Figure{Name: name, Caption: caption, Axis: AxisClients, Eps0: eps0, Delta: paperDelta,
		K: k, T: 100000, NMin: 100 * k, NMax: 100000 * k}
}

// List returns every figure panel, in paper order. Settings are those of
// the panel captions (NeurIPS'21 Fig. 2 as captioned in the arXiv version;
// supplement Figs. 4 and 5).
func List() []Figure {
	return []Figure{
		stepsFigure("neurips21-fig2a", "NeurIPS'21 Fig. 2a: eps vs T, eps0=2, gamma=0.001, n=1e6, delta=1e-8", 2, 0.001, 1000000),
		stepsFigure("neurips21-fig2b", "NeurIPS'21 Fig. 2b: eps vs T, eps0=1, gamma=0.001, n=1e7, delta=1e-8", 1, 0.001, 10000000),
		clientsFigure("neurips21-fig2c", "NeurIPS'21 Fig. 2c: eps vs n, eps0=2, k=gamma·n=1e3, T=1e5, delta=1e-8", 2, 1000),
		stepsFigure("neurips21-fig4a", "NeurIPS'21 suppl. Fig. 4a: eps vs T, eps0=1, gamma=0.001, n=1e6, delta=1e-8", 1, 0.001, 1000000),
		stepsFigure("neurips21-fig4b", "NeurIPS'21 suppl. Fig. 4b: eps vs T, eps0=1, gamma=0.001, n=1e7, delta=1e-8", 1, 0.001, 10000000),
		clientsFigure("neurips21-fig4c", "NeurIPS'21 suppl. Fig. 4c: eps vs n, eps0=1, k=gamma·n=1e4, T=1e5, delta=1e-8", 1, 10000),
		stepsFigure("neurips21-fig5a", "NeurIPS'21 suppl. Fig. 5a: eps vs T, eps0=3, gamma=0.001, n=1e6, delta=1e-8", 3, 0.001, 1000000),
		stepsFigure("neurips21-fig5b", "NeurIPS'21 suppl. Fig. 5b: eps vs T, eps0=3, gamma=0.0001, n=1e7, delta=1e-8", 3, 0.0001, 10000000),
		clientsFigure("neurips21-fig5c", "NeurIPS'21 suppl. Fig. 5c: eps vs n, eps0=3, k=gamma·n=1e3, T=1e5, delta=1e-8", 3, 1000),
	}
}

// Lookup returns the figure with the given name; the short forms "fig2a"
// and "2a" are accepted too.
func Lookup(name string) (Figure, error) {
	var names []string
	for _, f := range List() {
		if f.Name == name || f.Name == "neurips21-"+name || f.Name == "neurips21-fig"+name {
			return f, nil
		}
		names = append(names, f.Name)
	}
	sort.Strings(names)
	return Figure{}, fmt.Errorf("figure must be one of %v, got %q", names, name)
}

// MaxPoints is the largest number of x values XValues gives. Every point
// costs one accountant evaluation per bound; at 100 points the slowest
// figure (neurips21-fig4c, eps vs n up to 1e7 clients) took about 16 s of
// CPU and 90 MB (200 points: 32 s, 170 MB; 100,000 points ran past a
// minute and 2.3 GB before it was stopped), and 100 log-spaced points
// already draw smooth curves.
const MaxPoints = 100

// XValues returns `points` log-spaced integer x values spanning the figure's
// axis (fewer if rounding makes some coincide). points must be in
// [2, MaxPoints].
func (f Figure) XValues(points int) ([]int64, error) {
	if points < 2 || points > MaxPoints {
		return nil, fmt.Errorf("points must be between 2 and %d, got %d", MaxPoints, points)
	}
	lo, hi := f.TMin, f.TMax
	if f.Axis == AxisClients {
		lo, hi = f.NMin, f.NMax
	}
	var xs []int64
	for i := 0; i < points; i++ {
		v := int64(math.Round(math.Exp(math.Log(float64(lo)) + float64(i)*(math.Log(float64(hi))-math.Log(float64(lo)))/float64(points-1))))
		if len(xs) == 0 || v > xs[len(xs)-1] {
			xs = append(xs, v)
		}
	}
	return xs, nil
}

// SettingAt returns the full setting at x (T or n, depending on the axis).
func (f Figure) SettingAt(x int64) Setting {
	if f.Axis == AxisClients {
		return Setting{N: x, K: f.K, Eps0: f.Eps0, Steps: f.T, Delta: f.Delta}
	}
	k := int64(math.Round(f.Gamma * float64(f.N)))
	return Setting{N: f.N, K: k, Eps0: f.Eps0, Steps: x, Delta: f.Delta}
}

// XLabel is the axis title.
func (f Figure) XLabel() string {
	if f.Axis == AxisClients {
		return "n (clients)"
	}
	return "T (rounds)"
}
