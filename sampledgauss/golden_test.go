package sampledgauss

import (
	"encoding/json"
	"math"
	"os"
	"strconv"
	"testing"
)

// goldenPoint is one (q, sigma, order) of testdata/golden.json: log A,
// log(A - 1) and eps = log(A)/(order-1) from a 50-digit mpmath integration
// of A_alpha = E_{mu0}[(mu/mu0)^alpha] over the real line (gen_golden.py),
// a route independent of the series evaluated here.
type goldenPoint struct {
	Q      float64 `json:"q"`
	Sigma  float64 `json:"sigma"`
	Order  float64 `json:"order"`
	LogA   string  `json:"log_a"`
	LogAm1 string  `json:"log_am1"`
	Eps    string  `json:"eps"`
}

func loadGolden(t testing.TB) []goldenPoint {
	t.Helper()
	b, err := os.ReadFile("testdata/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Points []goldenPoint `json:"points"`
	}
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Points) < 100 {
		t.Fatalf("golden.json has %d points, want the full grid", len(g.Points))
	}
	return g.Points
}

func parse(t testing.TB, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Tolerances against the oracle. The acceptance criterion is
// agreement to 1e-6 relative; the package documents (and this test holds
// it to) 1e-7 (the largest excess on the grid is 7.8e-8, at q = 0.5,
// sigma = 50, order 1.01; see the package doc). A value below the oracle
// by more than 1e-12 relative (the oracle's 30 printed digits and float64
// parsing are far more accurate) would be a bound that is not a bound.
const (
	goldenRelTol   = 1e-7
	goldenBelowTol = 1e-12
)

// TestRDPGolden compares RDP with the mpmath oracle at every golden point:
// never below, and within goldenRelTol above.
func TestRDPGolden(t *testing.T) {
	worst, worstAt := 0.0, goldenPoint{}
	for _, c := range loadGolden(t) {
		m, err := New(c.Q, c.Sigma)
		if err != nil {
			t.Fatal(err)
		}
		got, err := m.RDP(c.Order)
		if err != nil {
			t.Fatalf("q=%g sigma=%g order=%g: %v", c.Q, c.Sigma, c.Order, err)
		}
		want := parse(t, c.Eps)
		rel := (got - want) / want
		if rel < -goldenBelowTol {
			t.Errorf("q=%g sigma=%g order=%g: eps %.17g below the exact %.17g (rel %.3g)", c.Q, c.Sigma, c.Order, got, want, rel)
		}
		if rel > goldenRelTol {
			t.Errorf("q=%g sigma=%g order=%g: eps %.17g exceeds the exact %.17g by %.3g relative", c.Q, c.Sigma, c.Order, got, want, rel)
		}
		if rel > worst {
			worst, worstAt = rel, c
		}
	}
	t.Logf("largest relative excess over the oracle: %.3g at q=%g sigma=%g order=%g", worst, worstAt.Q, worstAt.Sigma, worstAt.Order)
}

// TestLogAm1Golden checks log(A - 1), the quantity summed, against the
// oracle's independent integral of (1+qW)^alpha - 1 - alpha q W: an upper
// bound everywhere, and within goldenRelTol relative in A - 1 where
// A - 1 <= 1 (where A - 1 is large, TestRDPGolden's relative error of
// log A is the meaningful one).
func TestLogAm1Golden(t *testing.T) {
	worst := 0.0
	for _, c := range loadGolden(t) {
		if c.Q == 1 {
			continue
		}
		m, _ := New(c.Q, c.Sigma)
		got, err := m.logAm1(c.Order)
		if err != nil {
			t.Fatal(err)
		}
		want := parse(t, c.LogAm1)
		// got - want is the log of the ratio of the two A - 1 values.
		d := got - want
		if d < -goldenBelowTol {
			t.Errorf("q=%g sigma=%g order=%g: log(A-1) %.17g below the exact %.17g", c.Q, c.Sigma, c.Order, got, want)
		}
		if want <= 0 && math.Expm1(d) > goldenRelTol {
			t.Errorf("q=%g sigma=%g order=%g: A-1 exceeds the exact value by %.3g relative", c.Q, c.Sigma, c.Order, math.Expm1(d))
		}
		if want <= 0 {
			worst = math.Max(worst, math.Expm1(d))
		}
	}
	t.Logf("largest relative excess of A-1 over the oracle: %.3g", worst)
}
