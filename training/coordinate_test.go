package training

import (
	"math"
	"testing"

	"github.com/shuffledp/shuffledp/model"
)

// fullGradientModel hides a model's model.CoordinateWorker, so that its
// clients take the full path (Gradient, ClipLinf, Randomize).
type fullGradientModel struct{ model.Model }

func (m fullGradientModel) NewWorker() model.Worker {
	return struct{ model.Worker }{m.Model.NewWorker()}
}

// TestCoordinatePathTrainsBitForBit: R_inf with the per-coordinate clamp on
// the CNNs, where clients compute one gradient coordinate
// (client.Client's coordinate path), gives bit for bit the parameters and
// per-round losses of the same run through the full per-example gradient.
func TestCoordinatePathTrainsBitForBit(t *testing.T) {
	for _, name := range []string{"cnn-tanh", "cnn"} {
		t.Run(name, func(t *testing.T) {
			cfg := Config{Clients: 120, Sample: 40, Randomizer: RandomizerRInf, ClipNorm: NormLInf, ClampLinf: true,
				Clip: 0.01, Eps0: 1.5, Delta: 1e-5, Epochs: 100, LR: mustSchedule(t, "0.3"), Seed: 7, Workers: 2}
			train := mnistShaped(cfg.Clients, 9)
			run := func(full bool) ([]float64, []float64) {
				m, err := model.New(name, 784, 10)
				if err != nil {
					t.Fatal(err)
				}
				var mm model.Model = m
				if full {
					mm = fullGradientModel{m}
				}
				tr, err := New(cfg, mm, train, nil)
				if err != nil {
					t.Fatal(err)
				}
				var losses []float64
				for range 6 {
					st, err := tr.Step()
					if err != nil {
						t.Fatal(err)
					}
					losses = append(losses, st.Loss)
				}
				return m.Params(), losses
			}
			fastP, fastL := run(false)
			fullP, fullL := run(true)
			for i := range fastL {
				if math.Float64bits(fastL[i]) != math.Float64bits(fullL[i]) {
					t.Fatalf("round %d: loss %v on the coordinate path, %v on the full path", i+1, fastL[i], fullL[i])
				}
			}
			if !bitwiseEqual(fastP, fullP) {
				t.Fatal("parameters differ between the coordinate path and the full path")
			}
			if bitwiseEqual(fastP, mustNew(t, name).Params()) {
				t.Fatal("no training happened")
			}
		})
	}
}

func mustNew(t *testing.T, name string) model.Model {
	t.Helper()
	m, err := model.New(name, 784, 10)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
