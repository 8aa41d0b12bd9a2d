package accounting

import (
	"encoding/json"
	"math"
	"os"
	"testing"
)

// golden.json is written by testdata/gen_golden.py (mpmath, 60 digits, the
// printed formulas summed literally; the lower bounds from exact binomial
// central moments).
type goldenFile struct {
	RDP []struct {
		Bound string  `json:"bound"`
		N     int64   `json:"n"`
		K     int64   `json:"k"`
		Eps0  float64 `json:"eps0"`
		Order float64 `json:"order"`
		Value float64 `json:"value"`
		// Tolerance, when set, is the relative excess allowed above the
		// oracle (where the Go code deliberately rounds the bound up);
		// otherwise the two must agree to 1e-9 either way.
		Tolerance float64 `json:"tolerance"`
	} `json:"rdp"`
	DP []struct {
		Bound   string  `json:"bound"`
		N       int64   `json:"n"`
		K       int64   `json:"k"`
		Eps0    float64 `json:"eps0"`
		Steps   int64   `json:"steps"`
		Delta   float64 `json:"delta"`
		Orders  string  `json:"orders"`
		Epsilon float64 `json:"epsilon"`
		Order   float64 `json:"order"`
	} `json:"dp"`
}

func loadGolden(t *testing.T) goldenFile {
	t.Helper()
	b, err := os.ReadFile("testdata/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g goldenFile
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.RDP) == 0 || len(g.DP) == 0 {
		t.Fatal("empty golden file")
	}
	return g
}

func mechanismFor(n, k int64) string {
	if n == k {
		return MechanismShuffle
	}
	return MechanismSubsampledShuffle
}

func TestGoldenRDP(t *testing.T) {
	for _, c := range loadGolden(t).RDP {
		m, err := NewBound(mechanismFor(c.N, c.K), c.Bound, c.N, c.K, c.Eps0)
		if c.Bound == BoundNeurIPS21Lower && c.N == c.K {
			m, err = SubsampledShuffleLower(c.N, c.K, c.Eps0)
		}
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		got, err := m.RDP(c.Order)
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		rel := math.Abs(got-c.Value) / c.Value
		if c.Tolerance > 0 {
			rel = (got - c.Value) / c.Value // only an excess is allowed, up to Tolerance
			if rel <= c.Tolerance {
				rel = 0
			}
		}
		if rel > 1e-9 {
			t.Errorf("%s n=%d k=%d eps0=%g order=%g: got %.15g, oracle %.15g (rel %.2g)", c.Bound, c.N, c.K, c.Eps0, c.Order, got, c.Value, rel)
		}
		// Upper bounds must never come out below the exact value.
		if !IsLower(m) && got < c.Value*(1-1e-14) {
			t.Errorf("%s order %g: %.17g is below the oracle's %.17g: not conservative", c.Bound, c.Order, got, c.Value)
		}
	}
}

func TestGoldenDP(t *testing.T) {
	for _, c := range loadGolden(t).DP {
		m, err := NewBound(mechanismFor(c.N, c.K), c.Bound, c.N, c.K, c.Eps0)
		if err != nil {
			t.Fatal(err)
		}
		orders, err := ParseOrders(c.Orders)
		if err != nil {
			t.Fatal(err)
		}
		a, _ := NewAccountant(orders)
		if err := a.Compose64(m, c.Steps); err != nil {
			t.Fatal(err)
		}
		g, err := a.Epsilon(c.Delta)
		if err != nil {
			t.Fatal(err)
		}
		if g.Order != c.Order || math.Abs(g.Epsilon-c.Epsilon) > 1e-9*c.Epsilon || g.Epsilon < c.Epsilon {
			t.Errorf("%s T=%d: got eps %.12g at order %g, oracle %.12g at order %g", c.Bound, c.Steps, g.Epsilon, g.Order, c.Epsilon, c.Order)
		}
	}
}

// TestSpecReferenceValues pins the reference points of the bounds'
// specification (shared/spec/bounds.md).
func TestSpecReferenceValues(t *testing.T) {
	up, _ := SubsampledShuffleUpper(1e6, 1000, 2)
	for _, c := range []struct{ order, want float64 }{
		{2, 3.2496655354659435e-07}, {10, 1.693289164909691e-06}, {100, 2.4972491014989475e-05},
	} {
		got, _ := up.RDP(c.order)
		// The deliberate rounding slack (logSumSlack) may lift the value
		// by < 1e-10 relative; it must never come out below.
		if got < c.want*(1-1e-15) || got > c.want*(1+1e-10) {
			t.Errorf("Thm 1 eps(%g) = %.17g, want %.17g", c.order, got, c.want)
		}
	}
	// CCS'21 authors' notebook (no floor on nbar): eps(100) = 0.0234454.
	// Flooring nbar makes ours slightly larger, never smaller.
	u1, _ := ShuffleUpper1(1e6, 2)
	got, _ := u1.RDP(100)
	if got < 0.0234454 || got > 0.0234454*1.001 {
		t.Errorf("CCS'21 Thm 3.1 eps(100) = %g, want just above 0.0234454", got)
	}
}
