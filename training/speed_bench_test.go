package training

import (
	"testing"
	"time"

	"github.com/shuffledp/shuffledp/model"
)

// BenchmarkRoundCNNTanhRInfClamp measures one round at the setting of the
// neurips21-fig3 preset (the authors' network cnn-tanh, d = 13,706; R_inf
// with eps0 = 1.5 and the per-coordinate clamp at C = 0.01), scaled to
// k = 1000 of n = 6000 MNIST-shaped clients. It reports client-updates per
// wall second and per CPU-second of the process.
func BenchmarkRoundCNNTanhRInfClamp(b *testing.B) {
	const n, k = 6000, 1000
	m, err := model.New("cnn-tanh", 784, 10)
	if err != nil {
		b.Fatal(err)
	}
	cfg := Config{Clients: n, Sample: k, Randomizer: RandomizerRInf, ClipNorm: NormLInf, ClampLinf: true,
		Clip: 0.01, Eps0: 1.5, Delta: 1e-5, Epochs: 1e9, LR: LRSchedule{Starts: []int{0}, Rates: []float64{0.3}}, Seed: 1}
	benchmarkSteps(b, cfg, m, mnistShaped(n, 1))
}

// BenchmarkEvaluateCNNTanh measures the per-epoch evaluation of the
// neurips21-fig3 preset: the forward pass of cnn-tanh over 10,000
// MNIST-shaped test examples, split over the workers.
func BenchmarkEvaluateCNNTanh(b *testing.B) {
	const n = 10000
	m, err := model.New("cnn-tanh", 784, 10)
	if err != nil {
		b.Fatal(err)
	}
	cfg := Config{Clients: 600, Sample: 60, Randomizer: RandomizerRInf, ClipNorm: NormLInf, ClampLinf: true,
		Clip: 0.01, Eps0: 1.5, Delta: 1e-5, Epochs: 1e9, LR: LRSchedule{Starts: []int{0}, Rates: []float64{0.3}}, Seed: 1}
	tr, err := New(cfg, m, mnistShaped(600, 1), mnistShaped(n, 2))
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	start, cpu0 := time.Now(), processCPUSeconds()
	for range b.N {
		tr.Evaluate(nil)
	}
	b.ReportMetric(float64(b.N*n)/time.Since(start).Seconds(), "examples/s")
	b.ReportMetric(float64(b.N*n)/(processCPUSeconds()-cpu0), "examples/cpu-s")
}

// BenchmarkRoundCNNTanhDJW measures one round at the setting of the
// neurips21-fig6 preset (cnn-tanh, DJW13's l2 randomizer, eps0 = 2, l2
// clip C = 0.005), scaled to k = 500 of n = 3000 MNIST-shaped clients.
func BenchmarkRoundCNNTanhDJW(b *testing.B) {
	const n, k = 3000, 500
	m, err := model.New("cnn-tanh", 784, 10)
	if err != nil {
		b.Fatal(err)
	}
	cfg := Config{Clients: n, Sample: k, Randomizer: RandomizerDJW, ClipNorm: NormL2,
		Clip: 0.005, Eps0: 2, Delta: 1e-5, Epochs: 1e9, LR: LRSchedule{Starts: []int{0}, Rates: []float64{12}}, Seed: 1}
	benchmarkSteps(b, cfg, m, mnistShaped(n, 1))
}
