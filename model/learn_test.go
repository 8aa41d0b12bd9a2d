package model

import (
	"math/rand/v2"
	"testing"
)

// blobTask returns n 28x28 images of 4 classes: class c has a bright 6x6
// square in quadrant c (jittered), plus sparse noise pixels everywhere.
func blobTask(rng *rand.Rand, n int) ([][]float64, []int) {
	xs := make([][]float64, n)
	ys := make([]int, n)
	for i := range xs {
		c := i % 4
		x := make([]float64, 784)
		oy, ox := 3+14*(c/2)+rng.IntN(4), 3+14*(c%2)+rng.IntN(4)
		for y := oy; y < oy+6; y++ {
			for xx := ox; xx < ox+6; xx++ {
				x[y*28+xx] = 0.5 + 0.5*rng.Float64()
			}
		}
		for range 40 {
			x[rng.IntN(784)] = rng.Float64()
		}
		xs[i], ys[i] = x, c
	}
	return xs, ys
}

// TestModelsLearnSeparableTask runs plain per-example SGD (averaging the
// per-example gradients of a batch, as CLDP-SGD's server does without
// noise) and checks every model fits an easy task: the gradients point
// downhill, not merely match finite differences locally.
func TestModelsLearnSeparableTask(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	trainX, trainY := blobTask(rng, 400)
	testX, testY := blobTask(rng, 200)
	for _, name := range Names {
		m, err := New(name, 784, 4)
		if err != nil {
			t.Fatal(err)
		}
		m.Init(NewInitRNG(3))
		w := m.NewWorker()
		accuracy := func() float64 {
			correct := 0
			logits := make([]float64, 4)
			for i, x := range testX {
				w.Logits(x, logits)
				if Argmax(logits) == testY[i] {
					correct++
				}
			}
			return float64(correct) / float64(len(testX))
		}
		if acc := accuracy(); acc > 0.6 {
			t.Fatalf("%s: accuracy %.3f before training; the task would not test learning", name, acc)
		}
		g := make([]float64, m.NumParams())
		sum := make([]float64, m.NumParams())
		const batch, lr = 20, 0.1
		for range 3 {
			for b := 0; b < len(trainX); b += batch {
				zero(sum)
				for i := b; i < b+batch; i++ {
					w.Gradient(trainX[i], trainY[i], g)
					axpyGeneric(sum, 1, g)
				}
				axpyGeneric(m.Params(), -lr/batch, sum)
			}
		}
		if acc := accuracy(); acc < 0.95 {
			t.Errorf("%s: test accuracy %.3f after 3 epochs of SGD, want >= 0.95", name, acc)
		} else {
			t.Logf("%s: test accuracy %.3f", name, acc)
		}
	}
}
