package client

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/shuffledp/shuffledp/model"
	"github.com/shuffledp/shuffledp/protocol"
	"github.com/shuffledp/shuffledp/randomizer"
)

// ReportUpdate with the gradient a client's own worker computes is Report,
// byte for byte under the same noise, for every randomizer the trainer
// offers (and the R_inf clamp, whose Report takes the one-coordinate path).
func TestReportUpdateIsReportOfTheGivenGradient(t *testing.T) {
	ex := Example{X: []float64{1, -2, 0.5}, Label: 1}
	for _, tc := range []struct {
		rand, norm string
		clip       float64
		clamp      bool
	}{
		{"rinf", protocol.NormLInf, 0.05, false},
		{"rinf", protocol.NormLInf, 0.05, true},
		{"r1", protocol.NormL1, 0.2, false},
		{"r2", protocol.NormL2, 0.1, false},
		{"privunit", protocol.NormL2, 0.1, false},
		{protocol.RandomizerGaussian, protocol.NormL2, 0.1, false},
	} {
		t.Run(tc.rand+"-"+tc.norm, func(t *testing.T) {
			m := logReg(t, 3, 2)
			cfg := protocol.RunConfig{Run: "test", Model: m.Name(), Dim: m.NumParams(), Randomizer: tc.rand, ClipNorm: tc.norm,
				ClampLinf: tc.clamp, Clip: tc.clip, Eps0: 2, Population: 10, PerRound: 5, MinBatch: 5}
			if tc.rand == protocol.RandomizerGaussian {
				cfg.Eps0, cfg.Sigma = 0, 1.5
			}
			r, err := protocol.NewRandomizer(cfg)
			if err != nil {
				t.Fatal(err)
			}
			cfg.ReportBytes = r.ReportSize()
			c, err := New(cfg, m, protocol.Plaintext{})
			if err != nil {
				t.Fatal(err)
			}
			round := &protocol.Round{ID: 3, Model: protocol.Model{Run: "test", Version: 1, Params: append([]float64(nil), m.Params()...)}}
			grad := make([]float64, m.NumParams())
			m.NewWorker().Gradient(ex.X, ex.Label, grad)
			kept := append([]float64(nil), grad...)
			for seed := range uint64(20) {
				want, _, err := c.Report(round, ex, randomizer.NewSeededSource(seed))
				if err != nil {
					t.Fatal(err)
				}
				got, err := c.ReportUpdate(round, grad, randomizer.NewSeededSource(seed))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("seed %d: ReportUpdate %x, Report %x", seed, got, want)
				}
			}
			for i := range grad {
				if grad[i] != kept[i] {
					t.Fatal("ReportUpdate modified the caller's update")
				}
			}
		})
	}
}

// An external model's client refuses an update of the wrong length or
// with a non-finite entry, naming the client update function.
func TestReportUpdateRefuses(t *testing.T) {
	m, err := model.NewExternal(make([]float64, 4))
	if err != nil {
		t.Fatal(err)
	}
	cfg := runConfig(t, m, "rinf", protocol.NormLInf, 0.1)
	c, err := New(cfg, m, protocol.Plaintext{})
	if err != nil {
		t.Fatal(err)
	}
	round := &protocol.Round{ID: 1, Model: protocol.Model{Run: "test", Version: 0, Params: make([]float64, 4)}}
	for _, tc := range []struct {
		update []float64
		want   string
	}{
		{[]float64{1, 2, 3}, "client update function returned 3 values; the model has 4 parameters"},
		{[]float64{0, 0, math.NaN(), 0}, "client update function returned NaN at index 2"},
		{[]float64{math.Inf(-1), 0, 0, 0}, "returned -Inf at index 0"},
	} {
		if _, err := c.ReportUpdate(round, tc.update, randomizer.NewSeededSource(1)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("update %v: %v, want an error containing %q", tc.update, err, tc.want)
		}
	}
	if _, err := c.ReportUpdate(round, []float64{0.5, -0.5, 0, 1}, randomizer.NewSeededSource(1)); err != nil {
		t.Fatal(err)
	}
}

// An external model's client with local steps (their arithmetic is the
// caller's) builds no local Go model and reports the given update.
func TestReportUpdateExternalLocalSteps(t *testing.T) {
	m, err := model.NewExternal(make([]float64, 4))
	if err != nil {
		t.Fatal(err)
	}
	cfg := runConfig(t, m, "rinf", protocol.NormLInf, 0.1)
	cfg.LocalSteps, cfg.LocalLR = 3, 0.5
	c, err := New(cfg, m, protocol.Plaintext{})
	if err != nil {
		t.Fatal(err)
	}
	round := &protocol.Round{ID: 1, Model: protocol.Model{Run: "test", Version: 0, Params: make([]float64, 4)}}
	if _, err := c.ReportUpdate(round, []float64{0.5, -0.5, 0, 1}, randomizer.NewSeededSource(1)); err != nil {
		t.Fatal(err)
	}
}
