package client

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/shuffledp/shuffledp/model"
	"github.com/shuffledp/shuffledp/protocol"
	"github.com/shuffledp/shuffledp/randomizer"
)

// updateExamples are three examples of 4 inputs and 3 classes.
var updateExamples = []Example{
	{X: []float64{1, -2, 0.5, 0}, Label: 1},
	{X: []float64{0.3, 0.1, -1, 2}, Label: 0},
	{X: []float64{-0.7, 0.4, 0.9, -0.2}, Label: 2},
}

// localConfig is a non-private run configuration (clear updates) with a
// clip too large to bind, E local steps at step size lr.
func localConfig(t *testing.T, m model.Model, steps int, lr float64) protocol.RunConfig {
	cfg := runConfig(t, m, protocol.RandomizerNone, protocol.NormL2, 1e6)
	cfg.LocalSteps, cfg.LocalLR = steps, lr
	return cfg
}

// TestLocalStepOneIsMeanGradient: with E = 1 a client holding M examples
// reports the mean of their gradients, bit for bit the sum of the
// independently computed gradients in order divided by M; for M = 1 it is
// ClippedGradient's vector and Report's bytes.
func TestLocalStepOneIsMeanGradient(t *testing.T) {
	for _, steps := range []int{0, 1} {
		m := logReg(t, 4, 3)
		c, err := New(localConfig(t, m, steps, 0), m, nil)
		if err != nil {
			t.Fatal(err)
		}
		round := &protocol.Round{ID: 1, Model: protocol.Model{Run: "test", Params: m.Params()}}
		got, loss, err := c.ClippedExamples(round, updateExamples)
		if err != nil {
			t.Fatal(err)
		}
		want := make([]float64, m.NumParams())
		one := make([]float64, m.NumParams())
		var wantLoss float64
		for _, ex := range updateExamples {
			wantLoss += m.NewWorker().Gradient(ex.X, ex.Label, one)
			for i, v := range one {
				want[i] += v
			}
		}
		for i := range want {
			want[i] /= 3
		}
		if !slices.Equal(got, want) || loss != wantLoss/3 {
			t.Fatalf("steps %d: update %v loss %g, want the mean gradient %v loss %g", steps, got, loss, want, wantLoss/3)
		}
		single, _, _ := c.ClippedExamples(round, updateExamples[1:2])
		single = slices.Clone(single)
		g, _, _ := c.ClippedGradient(round, updateExamples[1])
		m.NewWorker().Gradient(updateExamples[1].X, updateExamples[1].Label, one)
		if !slices.Equal(single, one) || !slices.Equal(g, one) {
			t.Fatalf("steps %d: one example's update is not its gradient", steps)
		}
	}
	// Report and ReportExamples of one example: the same bytes for the same
	// noise, on the full path and R_inf's coordinate path alike.
	for _, clamp := range []bool{false, true} {
		m := logReg(t, 4, 3)
		cfg := runConfig(t, m, "rinf", protocol.NormLInf, 0.05)
		cfg.ClampLinf = clamp
		c, err := New(cfg, m, protocol.Plaintext{})
		if err != nil {
			t.Fatal(err)
		}
		round := &protocol.Round{ID: 1, Model: protocol.Model{Run: "test", Params: m.Params()}}
		for k := range 50 {
			a, _, err1 := c.Report(round, updateExamples[k%3], randomizer.NewSeededSource(uint64(k)))
			a = bytes.Clone(a)
			b, _, err2 := c.ReportExamples(round, updateExamples[k%3:k%3+1], randomizer.NewSeededSource(uint64(k)))
			if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
				t.Fatalf("clamp %v: Report and ReportExamples of one example differ (%v, %v)", clamp, err1, err2)
			}
		}
	}
}

// TestLocalStepsPseudoGradient: with E > 1 the update is (w_0 - w_E)/(E
// eta) of E full-batch steps, computed here independently by stepping a
// copy of the model (agreement to 1e-12 relative: the client sums the
// steps' gradients instead of subtracting the end point); it differs from
// the mean gradient at w_0, leaves the round's model untouched, and the
// loss is the mean loss at w_0. A wrong variant (dividing by eta only)
// is refused by the same comparison.
func TestLocalStepsPseudoGradient(t *testing.T) {
	const steps, eta = 4, 0.7
	m := logReg(t, 4, 3)
	w0 := slices.Clone(m.Params())
	c, err := New(localConfig(t, m, steps, eta), m, nil)
	if err != nil {
		t.Fatal(err)
	}
	round := &protocol.Round{ID: 1, Model: protocol.Model{Run: "test", Params: m.Params()}}
	got, loss, err := c.ClippedExamples(round, updateExamples)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m.Params(), w0) {
		t.Fatal("local steps changed the round's model")
	}
	ref := logReg(t, 4, 3)
	copy(ref.Params(), w0)
	wk := ref.NewWorker()
	g, mean := make([]float64, len(w0)), make([]float64, len(w0))
	var wantLoss float64
	for e := range steps {
		clear(mean)
		for _, ex := range updateExamples {
			l := wk.Gradient(ex.X, ex.Label, g)
			if e == 0 {
				wantLoss += l / 3
			}
			for i, v := range g {
				mean[i] += v / 3
			}
		}
		for i, v := range mean {
			ref.Params()[i] -= eta * v
		}
	}
	pseudo := make([]float64, len(w0))
	wrong := make([]float64, len(w0))
	var scale float64
	for i := range w0 {
		pseudo[i] = (w0[i] - ref.Params()[i]) / (steps * eta)
		wrong[i] = (w0[i] - ref.Params()[i]) / eta
		scale = max(scale, math.Abs(pseudo[i]))
	}
	close := func(a, b []float64) bool {
		for i := range a {
			if math.Abs(a[i]-b[i]) > 1e-12*scale {
				return false
			}
		}
		return true
	}
	if !close(got, pseudo) {
		t.Fatalf("update %v, want the pseudo-gradient %v", got, pseudo)
	}
	if close(got, wrong) {
		t.Fatal("the comparison cannot tell the pseudo-gradient from (w_0 - w_E)/eta")
	}
	first, err := New(localConfig(t, m, 1, 0), m, nil)
	if err != nil {
		t.Fatal(err)
	}
	g1, _, _ := first.ClippedExamples(round, updateExamples)
	if close(got, g1) {
		t.Fatal("four local steps gave the mean gradient at w_0")
	}
	if math.Abs(loss-wantLoss) > 1e-12 {
		t.Fatalf("loss %g, want the mean loss at w_0 %g", loss, wantLoss)
	}
	// A second call starts again from w_0: the same update.
	again, _, _ := c.ClippedExamples(round, updateExamples)
	if !slices.Equal(again, got) {
		t.Fatal("a second update of the same client differs")
	}
}

// TestLocalUpdateClippedAsAWhole: the update of E steps on M examples is
// clipped once, to norm C, then randomized as one gradient (the report
// size and the decoding are a single gradient's).
func TestLocalUpdateClippedAsAWhole(t *testing.T) {
	m := logReg(t, 4, 3)
	cfg := localConfig(t, m, 3, 0.5)
	cfg.Clip = 1e-3
	c, err := New(cfg, m, nil)
	if err != nil {
		t.Fatal(err)
	}
	round := &protocol.Round{ID: 1, Model: protocol.Model{Run: "test", Params: m.Params()}}
	g, _, err := c.ClippedExamples(round, updateExamples)
	if err != nil {
		t.Fatal(err)
	}
	var s float64
	for _, v := range g {
		s += v * v
	}
	if math.Abs(math.Sqrt(s)-1e-3) > 1e-15 {
		t.Fatalf("clipped update norm %g, want 1e-3", math.Sqrt(s))
	}
	pcfg := runConfig(t, m, "privunit", protocol.NormL2, 0.1)
	pcfg.LocalSteps, pcfg.LocalLR = 3, 0.5
	pc, err := New(pcfg, m, protocol.Plaintext{})
	if err != nil {
		t.Fatal(err)
	}
	rep, _, err := pc.ReportExamples(round, updateExamples, randomizer.NewSeededSource(1))
	if err != nil || len(rep) != pcfg.ReportBytes {
		t.Fatalf("report of %d bytes (%v), want %d", len(rep), err, pcfg.ReportBytes)
	}
}

// TestLocalStepsRefused: the run configuration refuses bad local-steps and
// local-lr values naming the flag, and a client refuses an empty example
// list.
func TestLocalStepsRefused(t *testing.T) {
	m := logReg(t, 4, 3)
	for _, c := range []struct {
		steps int
		lr    float64
		flag  string
	}{{-1, 0, "local-steps"}, {protocol.MaxLocalSteps + 1, 1, "local-steps"}, {2, 0, "local-lr"}, {2, math.Inf(1), "local-lr"},
		{2, math.NaN(), "local-lr"}, {2, -1, "local-lr"}, {1, 0.5, "local-lr"}} {
		if err := localConfig(t, m, c.steps, c.lr).Validate(); err == nil || !strings.Contains(err.Error(), c.flag) {
			t.Errorf("steps %d lr %g: %v, want an error naming %s", c.steps, c.lr, err, c.flag)
		}
	}
	c, err := New(localConfig(t, m, 1, 0), m, nil)
	if err != nil {
		t.Fatal(err)
	}
	round := &protocol.Round{ID: 1, Model: protocol.Model{Run: "test", Params: m.Params()}}
	if _, _, err := c.ClippedExamples(round, nil); err == nil {
		t.Error("an update of no example accepted")
	}
}
