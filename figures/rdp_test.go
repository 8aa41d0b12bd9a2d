package figures

import (
	"math"
	"testing"
)

// The accountant's lines at the NeurIPS'21 Fig. 2a point reproduce the spec's
// mpmath reference values (Thm 1 gives 1.0402185055 at order 28,
// ccs21+wbk19 gives 1.02366), also after the memoised curve is reused.
func TestRDPBoundsFig2a(t *testing.T) {
	s := Setting{N: 1000000, K: 1000, Eps0: 2, Steps: 100000, Delta: 1e-8}
	want := map[string]float64{"neurips21-upper": 1.0402185055, "ccs21+wbk19": 1.02366}
	var lower, upper float64
	for _, b := range RDPBounds() {
		for pass := 0; pass < 2; pass++ {
			e, err := b.Epsilon(s)
			if err != nil {
				t.Fatal(err)
			}
			if w, ok := want[b.Label()]; ok && math.Abs(e-w) > 1e-5*w {
				t.Errorf("%s = %.10g, want %.10g", b.Label(), e, w)
			}
			switch b.Label() {
			case "neurips21-lower":
				lower = e
				if b.Upper() {
					t.Error("neurips21-lower must not count as an upper bound")
				}
			case "neurips21-upper":
				upper = e
			case "rdp-best":
				if e > 1.02366*(1+1e-5) {
					t.Errorf("rdp-best %g above ccs21+wbk19", e)
				}
			}
		}
	}
	if !(lower > 0 && lower < upper) {
		t.Errorf("lower %g, upper %g", lower, upper)
	}
}
