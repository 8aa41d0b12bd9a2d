package pld

import (
	"encoding/json"
	"math"
	"os"
	"testing"
)

// Tests at the extremes: a million rounds at delta = 1e-12. Before the FFT
// was tilted (tilt.go) its absolute round-off bound, about T times 1e-14,
// was charged to every Delta and the PLD route failed there ("delta is
// not above the mass at infinite privacy loss").

type extremeGoldens struct {
	Gaussian []struct {
		Sigma float64
		Steps int
		Delta float64
		Eps   string
	}
	RR []struct {
		A     float64
		Steps int
		Delta float64
		Eps   string
	}
}

func loadExtreme(t *testing.T) extremeGoldens {
	t.Helper()
	b, err := os.ReadFile("testdata/extreme.json")
	if err != nil {
		t.Fatal(err)
	}
	var g extremeGoldens
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Gaussian) == 0 || len(g.RR) == 0 {
		t.Fatal("empty goldens")
	}
	return g
}

// brackets checks lower <= golden <= upper (2 ulps of slack for the
// golden's rounding to float64) and that the upper end is within rel of it.
func brackets(t *testing.T, name string, iv Interval, golden, rel float64) {
	t.Helper()
	tol := 4 * ulp * golden
	if iv.Lower > golden+tol || iv.Upper < golden-tol {
		t.Errorf("%s: golden %.15g outside [%.15g, %.15g]", name, golden, iv.Lower, iv.Upper)
	}
	if iv.Upper > golden*(1+rel) {
		t.Errorf("%s: upper %.15g more than %g above the golden %.15g", name, iv.Upper, rel, golden)
	}
}

// TestExtremeGaussianGolden: the Gaussian mechanism composed 1e6 (and 1e4)
// times at delta = 1e-12 against its closed form (testdata/gen_extreme.py,
// mpmath): both ends of Epsilon bracket it, and EpsilonLower is Epsilon's
// lower end.
func TestExtremeGaussianGolden(t *testing.T) {
	g := loadExtreme(t)
	for _, c := range g.Gaussian {
		var a Accountant
		if err := a.AddGaussian(c.Sigma, c.Steps); err != nil {
			t.Fatal(err)
		}
		iv, err := a.Epsilon(c.Delta)
		if err != nil {
			t.Fatalf("sigma %v, %d steps, delta %v: %v", c.Sigma, c.Steps, c.Delta, err)
		}
		brackets(t, "gaussian", iv, parse(t, c.Eps), 5e-3)
		// EpsilonLower tilts for the optimistic per-step PLD (Epsilon for
		// the pessimistic one): the same optimistic PLD up to round-off.
		lo, err := a.EpsilonLower(c.Delta)
		if err != nil || lo > parse(t, c.Eps) || lo < iv.Lower*(1-1e-9) || lo > iv.Lower*(1+1e-9) {
			t.Errorf("sigma %v: EpsilonLower %v, %v; Epsilon's lower end %v", c.Sigma, lo, err, iv.Lower)
		}
	}
}

// TestExtremeRRGolden: binary randomized response at a = 7e-6 composed 1e6
// times (add-remove: both orders), against the exact binomial sum
// (testdata/gen_extreme.py). The grid puts the atoms mid-cell (AutoGrid's
// is a/6, where the atoms fall a hair below a grid point).
func TestExtremeRRGolden(t *testing.T) {
	g := loadExtreme(t)
	for _, c := range g.RR {
		p1 := 1 / (1 + math.Exp(-c.A))
		var a Accountant
		a.Grid = c.A / 5.5
		if err := a.AddPMFs([]float64{p1, 1 - p1}, []float64{1 - p1, p1}, c.Steps, false); err != nil {
			t.Fatal(err)
		}
		iv, err := a.Epsilon(c.Delta)
		if err != nil {
			t.Fatalf("a %v, %d steps: %v", c.A, c.Steps, err)
		}
		// Only the upper end is checked for tightness: the optimistic
		// garbling rounds a lone atom down by up to h every step, a bias
		// of order T h that swamps the spread sqrt(T) a of a two-atom
		// pair composed 1e6 times (its lower end here is 0; the clone
		// pair's atoms are dense enough to balance).
		brackets(t, "rr", iv, parse(t, c.Eps), 5e-3)
		t.Logf("rr: %v, golden %s", iv, c.Eps)
	}
}

// TestExtremeClone: the subsampled shuffle at n = 1e9, k = 100, eps0 = 8,
// T = 1e6, delta = 1e-12 answers; the interval lies inside what Google's
// dp_accounting gives for the same clone pair ([0.0450, 0.0468]) and below
// the RDP route's clones-rdp (0.04865); epsilon grows with T and Upper >=
// Lower at every T.
func TestExtremeClone(t *testing.T) {
	prev := 0.0
	for _, T := range []int{10000, 100000, 1000000} {
		var a Accountant
		if err := a.AddClone(1e9, 100, 8, T); err != nil {
			t.Fatal(err)
		}
		iv, err := a.Epsilon(1e-12)
		if err != nil {
			t.Fatalf("T=%d: %v", T, err)
		}
		if !(iv.Lower <= iv.Upper) || iv.Upper < prev {
			t.Errorf("T=%d: %v (upper at fewer rounds %v)", T, iv, prev)
		}
		prev = iv.Upper
		t.Logf("T=%d: %v", T, iv)
		if T == 1000000 && (iv.Lower < 0.0450 || iv.Upper > 0.0468) {
			t.Errorf("T=1e6: %v not inside dp_accounting's [0.0450, 0.0468]", iv)
		}
	}
}
