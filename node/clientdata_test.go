package node

import (
	"math"
	"testing"

	"github.com/shuffledp/shuffledp/data"
	pb "github.com/shuffledp/shuffledp/proto/shuffledp/v1"
)

// TestLoadClientDataSynthetic: a client pool's synthetic examples,
// generated on demand, are the examples the simulation's data set holds
// at the same indices (so `train` and `up` of one seed see the same
// data), and the pool holds none of them: its source has the population's
// length and no storage.
func TestLoadClientDataSynthetic(t *testing.T) {
	const n, seed = 500, 4
	src, err := LoadClientData(&pb.Dataset{Name: "synthetic", Seed: seed}, "", n)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := src.(data.SyntheticSource); !ok || src.Len() != n {
		t.Fatalf("source %T of %d examples, want a data.SyntheticSource of %d", src, src.Len(), n)
	}
	whole := data.Synthetic(n, seed)
	buf := make([]float64, 784)
	for _, i := range []int{0, 1, 249, 499} {
		x, y := src.At(i, buf)
		if y != whole.Y[i] {
			t.Fatalf("client %d: label %d, want %d", i, y, whole.Y[i])
		}
		for j, v := range whole.Example(i) {
			if math.Float64bits(x[j]) != math.Float64bits(v) {
				t.Fatalf("client %d: pixel %d is %v, want %v", i, j, x[j], v)
			}
		}
	}
	if _, err := LoadClientData(&pb.Dataset{Name: "mnist"}, "", n); err == nil {
		t.Error("mnist without a data directory was accepted")
	}
}
