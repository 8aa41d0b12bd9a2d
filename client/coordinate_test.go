package client

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/shuffledp/shuffledp/model"
	"github.com/shuffledp/shuffledp/protocol"
	"github.com/shuffledp/shuffledp/randomizer"
)

// clampConfig is a run of R_inf with the per-coordinate clamp at clip.
func clampConfig(t *testing.T, m model.Model, clip float64) protocol.RunConfig {
	t.Helper()
	cfg := protocol.RunConfig{Run: "test", Model: m.Name(), Dim: m.NumParams(), Randomizer: "rinf",
		ClipNorm: protocol.NormLInf, ClampLinf: true, Clip: clip, Eps0: 1.5, Population: 10, PerRound: 5, MinBatch: 5}
	r, err := protocol.NewRandomizer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ReportBytes = r.ReportSize()
	return cfg
}

// mnistLike returns an input of 784 values with ~20% non-zero pixels.
func mnistLike(rng *rand.Rand) []float64 {
	x := make([]float64, 784)
	for i := range x {
		if rng.Float64() < 0.2 {
			x[i] = rng.Float64()
		}
	}
	return x
}

// TestCoordinatePathMatchesFullPath: with R_inf and the clamp, a CNN
// client's reports through the one-coordinate path equal, byte for byte,
// those of the full path (gradient, ClipLinf, Randomize) for the same noise
// stream, as do the losses and the noise consumed; also where the
// coordinate path cannot certify the gradient finite (a NaN weight: the
// full path then clips the NaN gradient to zero) and falls back.
func TestCoordinatePathMatchesFullPath(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	for _, name := range []string{"cnn-tanh", "cnn", "logreg"} {
		for _, clip := range []float64{0.01, 1e-4, 10} {
			for _, poison := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/clip=%g/nan=%v", name, clip, poison), func(t *testing.T) {
					m, err := model.New(name, 784, 10)
					if err != nil {
						t.Fatal(err)
					}
					p := m.Params()
					for i := range p {
						p[i] += 0.03 * rng.NormFloat64()
					}
					if poison {
						p[len(p)/3] = math.NaN()
					}
					cfg := clampConfig(t, m, clip)
					fast, err := New(cfg, m, protocol.Plaintext{})
					if err != nil {
						t.Fatal(err)
					}
					if fast.coord == nil {
						t.Fatal("coordinate path not selected for R_inf with the clamp")
					}
					full, err := New(cfg, m, protocol.Plaintext{})
					if err != nil {
						t.Fatal(err)
					}
					full.coord = nil
					round := &protocol.Round{ID: 3, Model: protocol.Model{Run: "test", Version: 3, Params: p}}
					for i := range 150 {
						ex := Example{X: mnistLike(rng), Label: rng.IntN(10)}
						seed := rng.Uint64()
						s1, s2 := randomizer.NewSeededSource(seed), randomizer.NewSeededSource(seed)
						got, gotLoss, err := fast.Report(round, ex, s1)
						if err != nil {
							t.Fatal(err)
						}
						want, wantLoss, err := full.Report(round, ex, s2)
						if err != nil {
							t.Fatal(err)
						}
						if !bytes.Equal(got, want) || math.Float64bits(gotLoss) != math.Float64bits(wantLoss) && !(math.IsNaN(gotLoss) && math.IsNaN(wantLoss)) {
							t.Fatalf("client %d: coordinate path %x loss %v, full path %x loss %v", i, got, gotLoss, want, wantLoss)
						}
						if a, b := s1.Uint64(), s2.Uint64(); a != b {
							t.Fatalf("client %d: noise streams differ after the report", i)
						}
					}
				})
			}
		}
	}
}

// TestCoordinatePathSelection: the path applies only to R_inf with the
// per-coordinate clamp and a model that computes single coordinates (the
// CNN and logistic regression do; R_1 and the scaling clip never take it).
func TestCoordinatePathSelection(t *testing.T) {
	cnn, err := model.New("cnn-tanh", 784, 10)
	if err != nil {
		t.Fatal(err)
	}
	scale := clampConfig(t, cnn, 0.01)
	scale.ClampLinf = false
	lr := logReg(t, 3, 2)
	lrScale := clampConfig(t, lr, 0.01)
	lrScale.ClampLinf = false
	for _, tc := range []struct {
		name string
		m    model.Model
		cfg  protocol.RunConfig
		want bool
	}{
		{"cnn-tanh clamp", cnn, clampConfig(t, cnn, 0.01), true},
		{"cnn-tanh scale", cnn, scale, false},
		{"logreg clamp", lr, clampConfig(t, lr, 0.01), true},
		{"logreg scale", lr, lrScale, false},
		{"cnn-tanh r1", cnn, runConfig(t, cnn, "r1", protocol.NormL1, 0.01), false},
	} {
		c, err := New(tc.cfg, tc.m, protocol.Plaintext{})
		if err != nil {
			t.Fatal(err)
		}
		if got := c.coord != nil; got != tc.want {
			t.Errorf("%s: coordinate path %v, want %v", tc.name, got, tc.want)
		}
	}
}
