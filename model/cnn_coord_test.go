package model

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// coordTestImages returns n MNIST-shaped inputs (about 19% non-zero pixels
// in [0, 1]) of h x w, plus one all-zero image.
func coordTestImages(rng *rand.Rand, n, h, w int) [][]float64 {
	out := make([][]float64, n+1)
	for i := range n {
		x := make([]float64, h*w)
		for p := range x {
			if rng.Float64() < 0.25 {
				x[p] = rng.Float64()
			}
		}
		out[i] = x
	}
	out[n] = make([]float64, h*w)
	return out
}

// perturbParams moves the parameters away from initialization (non-zero
// biases, larger weights), as training does.
func perturbParams(rng *rand.Rand, p []float64, scale float64) {
	for i := range p {
		p[i] += scale * rng.NormFloat64()
	}
}

// checkCoordinates compares GradientCoordinate with Gradient bit for bit at
// the coordinates for which keep returns true.
func checkCoordinates(t *testing.T, m Model, xs [][]float64, rng *rand.Rand, keep func(j int) bool) {
	t.Helper()
	w := m.NewWorker()
	cw, ok := w.(CoordinateWorker)
	if !ok {
		t.Fatalf("%s: worker does not implement CoordinateWorker", m.Name())
	}
	full := make([]float64, m.NumParams())
	checked := 0
	for xi, x := range xs {
		label := rng.IntN(m.NumClasses())
		wantLoss := w.Gradient(x, label, full)
		for j := range full {
			if !keep(j) {
				continue
			}
			g, loss, certified := cw.GradientCoordinate(x, label, j)
			if !certified {
				t.Fatalf("%s example %d: coordinate %d not certified finite at ordinary parameters", m.Name(), xi, j)
			}
			if math.Float64bits(loss) != math.Float64bits(wantLoss) {
				t.Fatalf("%s example %d coordinate %d: loss %v, Gradient's %v", m.Name(), xi, j, loss, wantLoss)
			}
			if math.Float64bits(g) != math.Float64bits(full[j]) {
				t.Fatalf("%s example %d: coordinate %d (%s) = %v (bits %#x), Gradient's %v (bits %#x)",
					m.Name(), xi, j, cnnParamName(m, j), g, math.Float64bits(g), full[j], math.Float64bits(full[j]))
			}
			checked++
		}
	}
	t.Logf("%s: %d coordinates bit-identical (useAVX2 = %v)", m.Name(), checked, useAVX2)
}

// cnnParamName names the layer of parameter j, for messages.
func cnnParamName(m Model, j int) string {
	c, ok := m.(*CNN)
	if !ok {
		return "?"
	}
	for _, b := range []struct {
		name string
		lo   int
	}{{"bd2", c.bd2}, {"wd2", c.wd2}, {"bd1", c.bd1}, {"wd1", c.wd1}, {"b2", c.b2}, {"w2", c.w2}, {"b1", c.b1}, {"w1", c.w1}} {
		if j >= b.lo {
			return fmt.Sprintf("%s[%d]", b.name, j-b.lo)
		}
	}
	return "?"
}

// TestGradientCoordinateMatchesGradient: every coordinate of every layer of
// small CNNs (ReLU and tanh), on several inputs at perturbed parameters,
// equals Gradient's bit for bit, and so does the loss.
func TestGradientCoordinateMatchesGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, act := range []Activation{ReLU, Tanh} {
		for _, cfg := range []CNNConfig{
			{Height: 16, Width: 15, Filters1: 3, Filters2: 5, Hidden: 7, Classes: 4, Activation: act},
			{Height: 13, Width: 14, Filters1: 8, Filters2: 16, Hidden: 9, Classes: 3, Activation: act},
		} {
			t.Run(fmt.Sprintf("%v-%dx%d-%d-%d", act, cfg.Height, cfg.Width, cfg.Filters1, cfg.Filters2), func(t *testing.T) {
				m, err := NewCNNWithConfig(cfg)
				if err != nil {
					t.Fatal(err)
				}
				perturbParams(rng, m.Params(), 0.05)
				checkCoordinates(t, m, coordTestImages(rng, 6, cfg.Height, cfg.Width), rng, func(int) bool { return true })
			})
		}
	}
}

// TestGradientCoordinateFullSize checks the networks the trainer runs (the
// authors' cnn-tanh, d = 13,706, and Table 1's cnn, d = 26,010): every
// coordinate of one input (with -short, every 13th coordinate and every
// bias), and a random sample of coordinates of three more inputs.
func TestGradientCoordinateFullSize(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	for _, name := range []string{"cnn-tanh", "cnn"} {
		t.Run(name, func(t *testing.T) {
			m, err := New(name, 784, 10)
			if err != nil {
				t.Fatal(err)
			}
			c := m.(*CNN)
			perturbParams(rng, m.Params(), 0.02)
			xs := coordTestImages(rng, 3, 28, 28)
			isBias := func(j int) bool {
				return (j >= c.b1 && j < c.w2) || (j >= c.b2 && j < c.wd1) || (j >= c.bd1 && j < c.wd2) || j >= c.bd2
			}
			keep := func(j int) bool { return !testing.Short() || j%13 == 0 || isBias(j) }
			checkCoordinates(t, m, xs[:1], rng, keep)
			checkCoordinates(t, m, xs[1:], rng, func(j int) bool { return isBias(j) || rng.IntN(60) == 0 })
		})
	}
}

// TestGradientCoordinateCertificate: with a non-finite or huge weight the
// coordinate path refuses to certify, and whenever it does certify, the
// full gradient is finite (huge finite weights may go either way).
func TestGradientCoordinateCertificate(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	for _, name := range []string{"cnn-tanh", "cnn"} {
		m, err := New(name, 784, 10)
		if err != nil {
			t.Fatal(err)
		}
		c := m.(*CNN)
		p := m.Params()
		x := coordTestImages(rng, 1, 28, 28)[0]
		w := m.NewWorker()
		cw := w.(CoordinateWorker)
		full := make([]float64, m.NumParams())
		for _, tc := range []struct {
			name string
			at   int
			v    float64
		}{
			{"conv1 weight NaN", c.w1 + 5, math.NaN()},
			{"conv2 weight NaN", c.w2 + 7, math.NaN()},
			{"conv2 weight +Inf", c.w2 + 7, math.Inf(1)},
			{"conv2 weight 1e300", c.w2 + 7, 1e300},
			{"dense1 weight 1e300", c.wd1 + 3, 1e300},
			{"dense2 weight -Inf", c.wd2 + 1, math.Inf(-1)},
			{"dense2 bias NaN", c.bd2, math.NaN()},
			{"conv2 weight 1e100", c.w2 + 7, 1e100},
			{"dense1 weight 1e150", c.wd1 + 3, 1e150},
		} {
			old := p[tc.at]
			p[tc.at] = tc.v
			w.Gradient(x, 3, full)
			finite := maxAbs(full) <= math.MaxFloat64
			_, _, certified := cw.GradientCoordinate(x, 3, c.bd2)
			p[tc.at] = old
			if certified && !finite {
				t.Errorf("%s, %s: certified, but Gradient has a non-finite coordinate", name, tc.name)
			}
			if math.IsNaN(tc.v) || math.IsInf(tc.v, 0) { // the gradient is then non-finite too
				if certified {
					t.Errorf("%s, %s: certified", name, tc.name)
				}
			}
			t.Logf("%s, %s: certified %v, gradient finite %v", name, tc.name, certified, finite)
		}
	}
}

// TestLogRegGradientCoordinate: every coordinate of logistic regression
// (weights and biases), at perturbed parameters and on an all-zero input,
// equals Gradient's bit for bit, and a NaN input is not certified.
func TestLogRegGradientCoordinate(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	m, err := NewLogReg(37, 5)
	if err != nil {
		t.Fatal(err)
	}
	perturbParams(rng, m.Params(), 0.3)
	checkCoordinates(t, m, coordTestImages(rng, 6, 37, 1), rng, func(int) bool { return true })
	x := make([]float64, 37)
	x[3] = math.NaN()
	if _, _, certified := m.NewWorker().(CoordinateWorker).GradientCoordinate(x, 1, 0); certified {
		t.Error("a NaN input was certified finite")
	}
}
