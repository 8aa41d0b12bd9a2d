package training

import (
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/shuffledp/shuffledp/data"
	"github.com/shuffledp/shuffledp/model"
)

// mnistShaped returns n random 28x28 inputs with MNIST's density (about 19%
// non-zero pixels, inside a centred 20x20 box) and random labels: data of
// MNIST's shape for throughput measurements.
func mnistShaped(n int, seed uint64) *data.Dataset {
	r := rand.New(rand.NewPCG(seed, 3))
	ds := &data.Dataset{N: n, Dim: 784, Rows: 28, Cols: 28, Channels: 1, Classes: 10,
		X: make([]float64, n*784), Y: make([]int, n)}
	for j := range n {
		ds.Y[j] = r.IntN(10)
		for y := 4; y < 24; y++ {
			for x := 4; x < 24; x++ {
				if r.Float64() < 0.37 {
					ds.X[j*784+y*28+x] = r.Float64()
				}
			}
		}
	}
	return ds
}

// benchmarkRound measures one CLDP-SGD round of the NeurIPS'21 CNN (26,010
// parameters) with k = 1000 clients out of n = 6000 on MNIST-shaped data:
// per-client gradient, clip, randomize, shuffle, decode-and-sum, step and
// privacy accounting. It reports client-updates per wall second and per
// CPU-second of the process.
func benchmarkRound(b *testing.B, randomizerName string, clip, eps0 float64) {
	const n, k = 6000, 1000
	train := mnistShaped(n, 1)
	m, err := model.New("cnn", 784, 10)
	if err != nil {
		b.Fatal(err)
	}
	cfg := Config{Clients: n, Sample: k, Randomizer: randomizerName, Clip: clip, Eps0: eps0,
		Delta: 1e-5, Epochs: 1e9, LR: LRSchedule{Starts: []int{0}, Rates: []float64{0.1}}, Seed: 1}
	tr, err := New(cfg, m, train, nil)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := tr.Step(); err != nil { // warm up (allocations, accountant cache)
		b.Fatal(err)
	}
	b.ResetTimer()
	start, cpu0 := time.Now(), processCPUSeconds()
	for range b.N {
		if _, err := tr.Step(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*k)/time.Since(start).Seconds(), "client-updates/s")
	b.ReportMetric(float64(b.N*k)/(processCPUSeconds()-cpu0), "client-updates/cpu-s")
}

// processCPUSeconds returns the user+system CPU time of this process, so
// that throughput per CPU-second can be reported on a shared machine where
// wall-clock figures depend on other jobs.
func processCPUSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

func BenchmarkRoundCNNNone(b *testing.B) { benchmarkRound(b, RandomizerNone, 1, 0) }
func BenchmarkRoundCNNRInf(b *testing.B) { benchmarkRound(b, RandomizerRInf, 0.01, 1.5) }
func BenchmarkRoundCNNR2(b *testing.B)   { benchmarkRound(b, RandomizerR2, 0.005, 2) }
