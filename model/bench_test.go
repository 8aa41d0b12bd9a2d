package model

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"testing"
)

// processCPUSeconds returns the user+system CPU time of this process.
func processCPUSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// benchImages returns n inputs of 784 values: the first n MNIST training
// images when SHUFFLEDP_MNIST_DIR names a directory holding
// train-images-idx3-ubyte, otherwise synthetic images with MNIST's density
// (19% non-zero pixels, in a centred 20x20 box).
func benchImages(b *testing.B, n int) [][]float64 {
	if dir := os.Getenv("SHUFFLEDP_MNIST_DIR"); dir != "" {
		raw, err := os.ReadFile(filepath.Join(dir, "train-images-idx3-ubyte"))
		if err != nil {
			b.Fatal(err)
		}
		out := make([][]float64, n)
		for i := range out {
			out[i] = make([]float64, 784)
			for j := range 784 {
				out[i][j] = float64(raw[16+i*784+j]) / 255
			}
		}
		return out
	}
	rng := rand.New(rand.NewPCG(1, 1))
	out := make([][]float64, n)
	for i := range out {
		out[i] = make([]float64, 784)
		for y := 4; y < 24; y++ {
			for x := 4; x < 24; x++ {
				if rng.Float64() < 0.37 { // 0.37*400/784 = 19% of all pixels
					out[i][y*28+x] = rng.Float64()
				}
			}
		}
	}
	return out
}

// benchGradients computes b.N per-example gradients split over workers
// goroutines (one Worker and one gradient buffer each) and reports
// examples/s.
func benchGradients(b *testing.B, m Model, workers int, grad func(w Worker, x []float64, label int, g []float64)) {
	xs := benchImages(b, 256)
	cpu0 := processCPUSeconds()
	b.ResetTimer()
	var wg sync.WaitGroup
	per := (b.N + workers - 1) / workers
	for wi := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := m.NewWorker()
			g := make([]float64, m.NumParams())
			for i := wi * per; i < min(b.N, (wi+1)*per); i++ {
				grad(w, xs[i%len(xs)], i%10, g)
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "examples/s")
	// Per CPU-second of the process: insensitive to other processes
	// competing for the cores (the CI machine is shared).
	b.ReportMetric(float64(b.N)/(processCPUSeconds()-cpu0), "examples/cpu-s")
}

func workerCounts() []int {
	if p := runtime.GOMAXPROCS(0); p > 1 {
		return []int{1, p}
	}
	return []int{1}
}

// BenchmarkPerExampleGradient measures per-example gradients/s of each model
// with 1 and GOMAXPROCS workers.
func BenchmarkPerExampleGradient(b *testing.B) {
	for _, name := range Names {
		m, err := New(name, 784, 10)
		if err != nil {
			b.Fatal(err)
		}
		for _, workers := range workerCounts() {
			b.Run(fmt.Sprintf("%s/workers=%d", name, workers), func(b *testing.B) {
				benchGradients(b, m, workers, func(w Worker, x []float64, label int, g []float64) { w.Gradient(x, label, g) })
			})
		}
	}
}

// BenchmarkNaiveCNNGradient measures the straightforward baseline: dense
// direct convolution loops (naiveCNNGradient).
func BenchmarkNaiveCNNGradient(b *testing.B) {
	m, _ := NewCNN(28, 28, 10)
	for _, workers := range workerCounts() {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			benchGradients(b, m, workers, func(_ Worker, x []float64, label int, g []float64) { naiveCNNGradient(m, x, label, g) })
		})
	}
}
