package training

import (
	"context"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/shuffledp/shuffledp/data"
	"github.com/shuffledp/shuffledp/model"
	"github.com/shuffledp/shuffledp/protocol"
	"github.com/shuffledp/shuffledp/randomizer"
	"github.com/shuffledp/shuffledp/server"
	"github.com/shuffledp/shuffledp/shuffler"
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
	benchmarkRoundModel(b, "cnn", randomizerName, clip, eps0)
}

// benchmarkRoundModel is benchmarkRound with another model; with logistic
// regression (7,850 parameters, ~10 µs per gradient) the round's cost is
// mostly the engine's: sampling, noise keys, randomizing, the shuffler's
// checks, copies and digest, decoding, the step and the ledger.
func benchmarkRoundModel(b *testing.B, modelName, randomizerName string, clip, eps0 float64) {
	const n, k = 6000, 1000
	train := mnistShaped(n, 1)
	m, err := model.New(modelName, 784, 10)
	if err != nil {
		b.Fatal(err)
	}
	cfg := Config{Clients: n, Sample: k, Randomizer: randomizerName, Clip: clip, Eps0: eps0,
		Delta: 1e-5, Epochs: 1e9, LR: LRSchedule{Starts: []int{0}, Rates: []float64{0.1}}, Seed: 1}
	benchmarkSteps(b, cfg, m, train)
}

// benchmarkSteps times b.N rounds of a trainer for cfg (after one warm-up
// round) and reports client-updates per wall second and per CPU-second of
// the process.
func benchmarkSteps(b *testing.B, cfg Config, m model.Model, train *data.Dataset) {
	b.Helper()
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
	k := cfg.Sample
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

func BenchmarkRoundLogRegRInf(b *testing.B) {
	benchmarkRoundModel(b, "logreg", RandomizerRInf, 0.01, 1.5)
}

// nopBudget accepts every release.
type nopBudget struct{}

func (nopBudget) Debit(context.Context, shuffler.Release) error { return nil }

// BenchmarkRoundRelease isolates what the roles add to a round of k = 1000
// R_inf reports of the CNN's d = 26,010 (everything after the clients'
// work): "shuffle+decode" is the pre-roles trainer's path (the shuffler's
// permutation and copies of a slot-ordered batch, the server's decode-sum
// and step); "roles" is the same through the roles (shuffler Open with its
// sampling, one Submit per report, Release with the batch digest and the
// debit, server Receive with its receipt digest, opening, decode-sum and
// step).
func BenchmarkRoundRelease(b *testing.B) {
	const n, k = 6000, 1000
	m, err := model.New("cnn", 784, 10)
	if err != nil {
		b.Fatal(err)
	}
	cfg := Config{Clients: n, Sample: k, Randomizer: RandomizerRInf, Clip: 0.01, Eps0: 1.5,
		Delta: 1e-5, Epochs: 1e9, LR: LRSchedule{Starts: []int{0}, Rates: []float64{0.1}}, Seed: 1, Workers: 1}
	tr, err := New(cfg, m, mnistShaped(n, 1), nil)
	if err != nil {
		b.Fatal(err)
	}
	r, err := protocol.NewRandomizer(tr.RunConfig())
	if err != nil {
		b.Fatal(err)
	}
	src := randomizer.NewSeededSource(1)
	g := make([]float64, m.NumParams())
	reports := make([][]byte, n) // client i's report
	for i := range reports {
		for j := range g {
			g[j] = 0.01 * float64((i+j)%3-1)
		}
		if reports[i], err = r.Randomize(g, src); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("shuffle+decode", func(b *testing.B) {
		sh, err := shuffler.New(k, shuffler.WithSource(randomizer.NewSeededSource(2)))
		if err != nil {
			b.Fatal(err)
		}
		sampled, in, sum := make([]int, k), make([][]byte, k), make([]float64, m.NumParams())
		for b.Loop() {
			tr.simulation().sim.Round(sampled)
			for slot, c := range sampled {
				in[slot] = reports[c]
			}
			out, err := sh.Shuffle(in)
			if err != nil {
				b.Fatal(err)
			}
			clear(sum)
			if err := randomizer.AddDecodedAll(r, out, 1, sum); err != nil {
				b.Fatal(err)
			}
			params := m.Params()
			for i, v := range sum {
				params[i] -= 1e-12 * v
			}
		}
	})
	b.Run("roles", func(b *testing.B) {
		svc, err := shuffler.NewService(shuffler.ServiceConfig{Run: tr.RunConfig(), Budget: nopBudget{}, Randomness: tr.simulation().sim})
		if err != nil {
			b.Fatal(err)
		}
		srv, err := server.New(server.Config{Run: tr.RunConfig(), LR: cfg.Schedule(), Opener: protocol.Plaintext{}, Receipts: &server.MemoryReceipts{}}, m)
		if err != nil {
			b.Fatal(err)
		}
		forward := func(ctx context.Context, bt protocol.Batch) error { _, err := srv.Receive(ctx, bt); return err }
		ctx := context.Background()
		for b.Loop() {
			round, err := svc.Open(ctx, srv.Model())
			if err != nil {
				b.Fatal(err)
			}
			for _, c := range svc.Sampled() {
				if err := svc.Submit(c, round.ID, reports[c]); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := svc.Release(ctx, forward); err != nil {
				b.Fatal(err)
			}
		}
	})
}
