package model

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkGradientCoordinate measures one client's work on the
// one-coordinate R_inf path (forward pass, loss, the backward pass that
// reaches a uniformly drawn coordinate, the finiteness certificate), 1 and
// GOMAXPROCS workers, on the inputs of BenchmarkPerExampleGradient.
func BenchmarkGradientCoordinate(b *testing.B) {
	for _, name := range []string{"cnn-tanh", "cnn"} {
		m, err := New(name, 784, 10)
		if err != nil {
			b.Fatal(err)
		}
		for _, workers := range workerCounts() {
			b.Run(fmt.Sprintf("%s/workers=%d", name, workers), func(b *testing.B) {
				rng := rand.New(rand.NewPCG(7, 8))
				js := make([]int, 4096)
				for i := range js {
					js[i] = rng.IntN(m.NumParams())
				}
				benchGradients(b, m, workers, func(w Worker, x []float64, label int, _ []float64) {
					w.(CoordinateWorker).GradientCoordinate(x, label, js[int(x[200]*1e6+float64(label))%len(js)])
				})
			})
		}
	}
}

// BenchmarkLogits measures the forward pass alone (evaluation).
func BenchmarkLogits(b *testing.B) {
	for _, name := range []string{"cnn-tanh", "cnn"} {
		m, err := New(name, 784, 10)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			out := make([]float64, 10)
			benchGradients(b, m, 1, func(w Worker, x []float64, _ int, _ []float64) { w.Logits(x, out) })
		})
	}
}
