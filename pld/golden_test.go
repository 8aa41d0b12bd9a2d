package pld

import (
	"encoding/json"
	"os"
	"strconv"
	"testing"
)

// goldens are computed by testdata/gen_goldens.py (mpmath, 50 digits):
// the Gaussian curve in closed form, the one-step sampled Gaussian in both
// orders, and the symmetric clone pair composed by exact enumeration.
type goldens struct {
	Gaussian []struct {
		Sigma, Eps float64
		Steps      int
		Delta      string
	}
	SampledGaussian []struct {
		Sigma, Rate, Eps float64
		Remove, Add      string
	} `json:"sampled_gaussian"`
	Clone []struct {
		N, K      int64
		Eps0, Eps float64
		Steps     int
		Delta     string
	}
}

func loadGoldens(t *testing.T) goldens {
	t.Helper()
	b, err := os.ReadFile("testdata/goldens.json")
	if err != nil {
		t.Fatal(err)
	}
	var g goldens
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Gaussian) == 0 || len(g.SampledGaussian) == 0 || len(g.Clone) == 0 {
		t.Fatal("empty goldens")
	}
	return g
}

func parse(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// contains checks lower <= golden <= upper. The golden is the float64
// nearest the 30-digit value, so a relative slack of 2 ulps is allowed.
func contains(t *testing.T, name string, iv Interval, golden float64) {
	t.Helper()
	tol := 4 * ulp * golden
	if iv.Lower > golden+tol || iv.Upper < golden-tol {
		t.Errorf("%s: golden %.15g outside [%.15g, %.15g]", name, golden, iv.Lower, iv.Upper)
	}
	// The bracket must also be useful: within 2% relative, or 1e-10
	// absolute (the optimistic garbling is coarser where a step has few,
	// widely spaced atoms, as the clone pair at n <= 20).
	if iv.Upper-iv.Lower > 2e-2*golden+1e-10 {
		t.Errorf("%s: bracket [%.15g, %.15g] wider than 2%% of %.15g", name, iv.Lower, iv.Upper, golden)
	}
	// The pessimistic side, which is the reported bound, within 0.5%.
	if iv.Upper-golden > 5e-3*golden+1e-10 {
		t.Errorf("%s: upper %.15g more than 0.5%% above %.15g", name, iv.Upper, golden)
	}
}

func TestGoldenGaussian(t *testing.T) {
	g := loadGoldens(t)
	cache := map[[2]float64]Composed{}
	for _, c := range g.Gaussian {
		key := [2]float64{c.Sigma, float64(c.Steps)}
		comp, ok := cache[key]
		if !ok {
			var err error
			comp, err = Gaussian(c.Sigma, c.Steps, Options{})
			if err != nil {
				t.Fatal(err)
			}
			cache[key] = comp
		}
		iv, err := comp.Delta(c.Eps)
		if err != nil {
			t.Fatal(err)
		}
		contains(t, "gaussian", iv, parse(t, c.Delta))
	}
}

func TestGoldenSampledGaussian(t *testing.T) {
	g := loadGoldens(t)
	cache := map[[2]float64][2]Bracket{}
	for _, c := range g.SampledGaussian {
		key := [2]float64{c.Sigma, c.Rate}
		if _, ok := cache[key]; !ok {
			m := &sampledGaussianMech{sigma: c.Sigma, q: c.Rate, steps: 1}
			a := Accountant{}
			a.events = append(a.events, m)
			h, _ := a.AutoGrid()
			rem, add, err := m.round(h)
			if err != nil {
				t.Fatal(err)
			}
			cache[key] = [2]Bracket{rem, add}
		}
		rem, add := cache[key][0], cache[key][1]
		ivr, _ := rem.Delta(c.Eps)
		iva, _ := add.Delta(c.Eps)
		contains(t, "sampled gaussian remove", ivr, parse(t, c.Remove))
		contains(t, "sampled gaussian add", iva, parse(t, c.Add))
	}
}

func TestGoldenClone(t *testing.T) {
	g := loadGoldens(t)
	for _, c := range g.Clone {
		comp, err := CloneShuffle(c.N, c.K, c.Eps0, c.Steps, Options{})
		if err != nil {
			t.Fatal(err)
		}
		iv, err := comp.Delta(c.Eps)
		if err != nil {
			t.Fatal(err)
		}
		contains(t, "clone", iv, parse(t, c.Delta))
	}
}
