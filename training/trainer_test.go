package training

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/shuffledp/shuffledp/data"
	"github.com/shuffledp/shuffledp/metrics"
	"github.com/shuffledp/shuffledp/model"
)

// blobs returns n examples of dimension dim in `classes` Gaussian clusters
// (unit variance) around centres drawn from centreSeed; drawSeed picks the
// examples, so blobs(..., c, 1) and blobs(..., c, 2) are a training and a
// test sample of the same task.
func blobs(n, dim, classes int, centreSeed, drawSeed uint64) *data.Dataset {
	rc := rand.New(rand.NewPCG(centreSeed, 99))
	centres := make([][]float64, classes)
	for c := range centres {
		centres[c] = make([]float64, dim)
		for i := range centres[c] {
			centres[c][i] = 2 * rc.NormFloat64()
		}
	}
	r := rand.New(rand.NewPCG(drawSeed, 7))
	ds := &data.Dataset{N: n, Dim: dim, Rows: dim, Cols: 1, Channels: 1, Classes: classes,
		X: make([]float64, n*dim), Y: make([]int, n)}
	for j := range n {
		c := r.IntN(classes)
		ds.Y[j] = c
		for i := range dim {
			ds.X[j*dim+i] = centres[c][i] + r.NormFloat64()
		}
	}
	return ds
}

func mustSchedule(t testing.TB, spec string) LRSchedule {
	t.Helper()
	s, err := ParseLRSchedule(spec)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func newLogReg(t testing.TB, dim, classes int) model.Model {
	t.Helper()
	m, err := model.NewLogReg(dim, classes)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func baseConfig(t testing.TB) Config {
	return Config{
		Clients: 600, Sample: 60, Randomizer: RandomizerNone, Clip: 1, Delta: 1e-5,
		Epochs: 3, LR: mustSchedule(t, "0.5"), Seed: 1,
	}
}

func TestNonPrivateLossDecreases(t *testing.T) {
	train, test := blobs(600, 10, 4, 1, 1), blobs(400, 10, 4, 1, 2)
	tr, err := New(baseConfig(t), newLogReg(t, 10, 4), train, test)
	if err != nil {
		t.Fatal(err)
	}
	before := tr.Evaluate(nil)
	var recs []metrics.Record
	reason, err := tr.Run(context.Background(), Hooks{OnEval: func(r metrics.Record) error { recs = append(recs, r); return nil }})
	if err != nil || reason != StopEpochs {
		t.Fatalf("Run = %v, %v", reason, err)
	}
	after := tr.Evaluate(nil)
	if !(after.Loss < before.Loss/2) || after.Accuracy < 0.9 {
		t.Errorf("test loss %.3f -> %.3f, accuracy %.3f -> %.3f; want the loss at least halved and accuracy >= 0.9",
			before.Loss, after.Loss, before.Accuracy, after.Accuracy)
	}
	// 600/60 = 10 rounds per epoch, 3 epochs: evaluations at rounds 0, 10, 20, 30.
	if len(recs) != 4 || recs[0].Round != 0 || recs[3].Round != 30 || recs[3].Epoch != 3 {
		t.Fatalf("evaluations at unexpected rounds: %+v", recs)
	}
	for _, r := range recs {
		if r.Epsilon != nil {
			t.Errorf("round %d: epsilon %v reported for randomizer none", r.Round, *r.Epsilon)
		}
	}
	if *recs[3].TrainLoss >= *recs[1].TrainLoss {
		t.Errorf("training loss did not decrease: %v then %v", *recs[1].TrainLoss, *recs[3].TrainLoss)
	}
}

// simulation returns the trainer's in-process transport (tests only).
func (t *Trainer) simulation() *simulation { return t.transport.(*simulation) }
