package randomizer

import (
	"strings"
	"testing"
)

// TestAuditRefusesDimAboveLimit checks that Audit refuses, before building
// its input grid, a randomizer above MaxAuditDim, and accepts one at it.
func TestAuditRefusesDimAboveLimit(t *testing.T) {
	for _, name := range []string{"krr", "rinf", "r1"} {
		r, err := New(name, Config{Eps0: 1, Dim: MaxAuditDim + 1, Radius: 1})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		d, ok := r.(Discrete)
		if !ok {
			t.Fatalf("%s is not Discrete", name)
		}
		if _, err := Audit(d); err == nil || !strings.Contains(err.Error(), "dim") {
			t.Errorf("%s dim %d: Audit error %v, want one naming dim", name, MaxAuditDim+1, err)
		}
	}
	if testing.Short() {
		return
	}
	r, err := New("rinf", Config{Eps0: 1, Dim: MaxAuditDim, Radius: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := Audit(r.(Discrete)); err != nil || !res.OK {
		t.Errorf("rinf at dim MaxAuditDim: %+v, %v", res, err)
	}
}
