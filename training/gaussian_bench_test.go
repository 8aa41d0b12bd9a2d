package training

import (
	"testing"
	"time"

	"github.com/shuffledp/shuffledp/model"
)

// BenchmarkRoundGaussian measures one round of Fig. 1a's setting end to end
// (cnn-tanh, d = 13,706, k = 60 of n = 6,000 MNIST-shaped clients, C =
// 0.05, sigma = 0.86): per-client gradient, clip, N(0, C^2 sigma^2 I_d)
// report (13,706 normals each; seeded ChaCha8, or ChaCha8 keyed from
// crypto/rand with -crypto), shuffler collection and permutation, decode,
// average, step and the ledger's debit; beside it the summed-noise
// simulation and the central baseline, which draw one vector per round.
func BenchmarkRoundGaussian(b *testing.B) {
	for _, v := range []struct {
		name       string
		randomizer string
		noiseSum   bool
		crypto     bool
	}{
		{"per-client", RandomizerGaussian, false, false},
		{"per-client-crypto", RandomizerGaussian, false, true},
		{"noise-sum", RandomizerGaussian, true, false},
		{"central", RandomizerCentralGaussian, false, false},
	} {
		b.Run(v.name, func(b *testing.B) {
			const n, k = 6000, 60
			m, err := model.New("cnn-tanh", 784, 10)
			if err != nil {
				b.Fatal(err)
			}
			m.Init(model.NewInitRNG(1))
			cfg := Config{Clients: n, Sample: k, Randomizer: v.randomizer, Clip: 0.05, Sigma: 0.86, NoiseSum: v.noiseSum,
				CryptoNoise: v.crypto, Delta: 1e-5, Epochs: 1e9, LR: LRSchedule{Starts: []int{0}, Rates: []float64{0.5}}, Seed: 1}
			tr, err := New(cfg, m, mnistShaped(n, 1), nil)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := tr.Step(); err != nil { // warm up (allocations, the accountant's curve)
				b.Fatal(err)
			}
			b.ResetTimer()
			start, cpu0 := time.Now(), processCPUSeconds()
			for range b.N {
				if _, err := tr.Step(); err != nil {
					b.Fatal(err)
				}
			}
			wall := time.Since(start).Seconds()
			b.ReportMetric(float64(b.N)/wall, "rounds/s")
			b.ReportMetric(float64(b.N*k)/wall, "client-updates/s")
			b.ReportMetric(float64(b.N*k)/(processCPUSeconds()-cpu0), "client-updates/cpu-s")
		})
	}
}
