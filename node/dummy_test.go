package node

import (
	"reflect"
	"slices"
	"testing"

	pb "github.com/shuffledp/shuffledp/proto/shuffledp/v1"
)

// TestBatchCarriesNoDropoutInformation pins what a released batch carries
// to the server: the run, the round, the report length and the reports.
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
	if want := []string{"ReportBytes", "Reports", "Round", "Run"}; !slices.Equal(fields, want) {
		t.Fatalf("pb.Batch fields %v, want exactly %v", fields, want)
	}
}
