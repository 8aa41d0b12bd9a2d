package node

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/shuffledp/shuffledp/data"
	pb "github.com/shuffledp/shuffledp/proto/shuffledp/v1"
	"github.com/shuffledp/shuffledp/protocol"
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

// TestClientAssignmentIsTheSimulations: with several examples a client
// and a partition by label, a pool deals the population exactly as the
// simulation does (the same partition of the same labels with the same
// seed), and a worker's view of a client is its examples, generated on
// demand; a run's bad data fields are refused.
func TestClientAssignmentIsTheSimulations(t *testing.T) {
	const n, m, seed = 40, 3, 6
	d := &pb.Dataset{Name: "synthetic", Seed: seed, ExamplesPerClient: m, Partition: "dirichlet:0.2"}
	src, err := LoadClientData(d, "", n)
	if err != nil {
		t.Fatal(err)
	}
	if src.Len() != n*m {
		t.Fatalf("source of %d examples, want %d", src.Len(), n*m)
	}
	asg, err := ClientAssignment(d, src, n)
	if err != nil {
		t.Fatal(err)
	}
	whole := data.Synthetic(n*m, seed)
	want, err := data.Partition{Kind: data.PartitionDirichlet, Alpha: 0.2}.Assign(n, m, whole.Classes, whole.Label, seed)
	if err != nil {
		t.Fatal(err)
	}
	view := newPoolExamples(src, asg)
	for c := range n {
		idx := want.Examples(c, nil)
		if got := asg.Examples(c, nil); !slices.Equal(got, idx) {
			t.Fatalf("client %d: pool holds %v, the simulation %v", c, got, idx)
		}
		exs := view.of(c)
		for j, i := range idx {
			if exs[j].Label != whole.Y[i] || !slices.Equal(exs[j].X, whole.Example(i)) {
				t.Fatalf("client %d: example %d is not example %d of the population", c, j, i)
			}
		}
	}
	for _, bad := range []*pb.Dataset{
		{Name: "synthetic", ExamplesPerClient: -1},
		{Name: "synthetic", Partition: "dirichlet:-1"},
		{Name: "synthetic", ExamplesPerClient: 3, Partition: "shards:2"},
	} {
		if _, err := LoadClientData(bad, "", n); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
	if err := (Dataset{Name: "synthetic", Partition: "bogus"}).Validate(); err == nil || !strings.Contains(err.Error(), "partition") {
		t.Errorf("a bad partition: %v", err)
	}
	rc := protocol.RunConfig{Run: "r", Model: "logreg", Dim: 10, Randomizer: "rinf", ClipNorm: "linf", Clip: 1, Eps0: 1,
		Population: 5, PerRound: 2, MinBatch: 2, ReportBytes: 4, LocalSteps: 3, LocalLR: 0.25}
	if back, err := runConfigFromPB(runConfigToPB(rc)); err != nil || back != rc {
		t.Errorf("local steps across the wire: %+v, %v", back, err)
	}
}
