package node

import (
	"bytes"
	"reflect"
	"slices"
	"testing"

	pb "github.com/shuffledp/shuffledp/proto/shuffledp/v1"
	"github.com/shuffledp/shuffledp/protocol"
)

// TestBatchCarriesNoDropoutInformation pins what a released batch carries
// to the server: the run, the round, the report length, the reports and
// the version of the model the round relayed (the server's own, published
// before the round was opened: (A3) argues it).
// No dummy count, per-client status or any other field that could depend
// on who dropped out (docs/proofs/dummy-reports.md, (A3)); a field added to
// the message fails this test and must be argued there first.
func TestBatchCarriesNoDropoutInformation(t *testing.T) {
	var fields []string
	ty := reflect.TypeOf(pb.Batch{})
	for i := range ty.NumField() {
		if f := ty.Field(i); f.IsExported() {
			fields = append(fields, f.Name)
		}
	}
	slices.Sort(fields)
	if want := []string{"ModelVersion", "ReportBytes", "Reports", "Round", "Run"}; !slices.Equal(fields, want) {
		t.Fatalf("pb.Batch fields %v, want exactly %v", fields, want)
	}
}

// TestRoundDummiesDropDelivered: a dummy is made for every slot of a round
// (constant work), the dummies of slots whose client delivered are dropped
// (before or after they were made), and a missing slot gets its
// precomputed dummy, whose report id is claimed with the round's.
func TestRoundDummiesDropDelivered(t *testing.T) {
	key, err := protocol.GenerateKey(1)
	if err != nil {
		t.Fatal(err)
	}
	run := protocol.RunConfig{Run: "r", Model: "logreg", Dim: 4, Randomizer: "rinf", ClipNorm: protocol.NormL2, Clip: 1, Eps0: 1,
		Population: 10, PerRound: 4, MinBatch: 4, ReportBytes: 8 + protocol.HPKEOverhead}
	d, err := newRoundDummies(run, run.Run, map[uint8]protocol.KeyConfig{1: key.Config})
	if err != nil {
		t.Fatal(err)
	}
	round := protocol.Round{ID: 3, Model: protocol.Model{Run: "r"}}
	d.set(round, 1, 4)
	d.delivered(3, 0) // before the precomputation finished
	d.precompute(round, 4)
	d.delivered(3, 2) // after
	d.delivered(2, 1) // another round: ignored
	for slot, want := range []bool{false, true, false, true} {
		if got := d.pre[slot] != nil; got != want {
			t.Fatalf("slot %d: precomputed dummy kept %v, want %v", slot, got, want)
		}
	}
	pre := d.pre[1]
	got, err := d.Dummy(round, 1)
	if err != nil || !bytes.Equal(got, pre) {
		t.Fatalf("missing slot 1: %v; want its precomputed dummy", err)
	}
	id, _ := protocol.ReportID(got)
	if ids := d.issuedIDs(); len(ids) != 1 || ids[0] != id {
		t.Fatalf("issued ids %v, want the dummy's", ids)
	}
}
