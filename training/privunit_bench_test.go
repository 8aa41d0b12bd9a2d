package training

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/shuffledp/shuffledp/data"
	"github.com/shuffledp/shuffledp/model"
)

// featureShaped returns n random unit-norm inputs of dimension dim with
// random labels: data of the ScatterNet features' shape (324 entries,
// unit l2 norm) for throughput measurements.
func featureShaped(n, dim int, seed uint64) *data.Dataset {
	r := rand.New(rand.NewPCG(seed, 5))
	ds := &data.Dataset{N: n, Dim: dim, Rows: 1, Cols: dim, Channels: 1, Classes: 10,
		X: make([]float64, n*dim), Y: make([]int, n)}
	for j := range n {
		ds.Y[j] = r.IntN(10)
		x := ds.X[j*dim : (j+1)*dim]
		var s float64
		for i := range x {
			x[i] = r.NormFloat64()
			s += x[i] * x[i]
		}
		for i := range x {
			x[i] /= math.Sqrt(s)
		}
	}
	return ds
}

// BenchmarkRoundScatterLogRegPrivUnit measures one round of k = 1000
// PrivUnit reports (eps0 2, l2 clip 0.5) of logistic regression on
// ScatterNet-shaped features (324 inputs, d = 3,250 parameters), n = 6000:
// per-client gradient, clip, PrivUnit, seal, shuffle, decode-and-sum and
// step. client-updates/cpu-s is the figure to compare on a shared machine.
func BenchmarkRoundScatterLogRegPrivUnit(b *testing.B) {
	const n, k = 6000, 1000
	m, err := model.New("logreg", 324, 10)
	if err != nil {
		b.Fatal(err)
	}
	cfg := Config{Clients: n, Sample: k, Randomizer: RandomizerPrivUnit, Clip: 0.5, Eps0: 2,
		Delta: 1e-5, Epochs: 1e9, LR: LRSchedule{Starts: []int{0}, Rates: []float64{0.1}}, Seed: 1}
	benchmarkSteps(b, cfg, m, featureShaped(n, 324, 1))
}
