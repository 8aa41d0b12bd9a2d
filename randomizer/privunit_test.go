package randomizer

import (
	"encoding/binary"
	"errors"
	"math"
	"testing"

	"gonum.org/v1/gonum/mathext"
)

// TestPrivUnitScaleGolden compares q (gonum's incomplete beta) and m
// (privUnitScale) with mpmath quadrature (testdata/gen_golden.py).
func TestPrivUnitScaleGolden(t *testing.T) {
	var g struct {
		PrivUnit []struct {
			D              int
			Gamma, P, Q, M float64
		} `json:"privunit"`
	}
	loadJSON(t, "testdata/golden.json", &g)
	if len(g.PrivUnit) == 0 {
		t.Fatal("no privunit goldens")
	}
	for _, c := range g.PrivUnit {
		a := float64(c.D-1) / 2
		q := mathext.RegIncBeta(a, a, (1-c.Gamma)/2)
		if math.Abs(q-c.Q) > 1e-10*c.Q {
			t.Errorf("d=%d γ=%g: q = %.15g, want %.15g", c.D, c.Gamma, q, c.Q)
		}
		m := privUnitScale(c.D, c.Gamma, c.P, c.Q)
		if math.Abs(m-c.M) > 1e-10*c.M {
			t.Errorf("d=%d γ=%g p=%g: m = %.15g, want %.15g", c.D, c.Gamma, c.P, m, c.M)
		}
	}
}

func TestPrivUnitBudget(t *testing.T) {
	for _, eps0 := range []float64{0.1, 1, 2, 5, 10} {
		for _, d := range []int{2, 3, 10, 1000, 13000} {
			r, err := NewPrivUnit(eps0, d, 1)
			if err != nil {
				t.Fatalf("eps0=%g d=%d: %v", eps0, d, err)
			}
			e := r.WorstCaseLogRatio()
			if e > eps0 || e < eps0*(1-1e-6) {
				t.Errorf("eps0=%g d=%d: worst-case log ratio %.12g", eps0, d, e)
			}
			// Recompute the bound independently from the parameters.
			gamma, q, p := r.Cap()
			a := float64(d-1) / 2
			q2 := mathext.RegIncBeta(a, a, (1-gamma)/2)
			e2 := math.Log(p/(1-p)) + math.Log((1-q2)/q2)
			if e2 > eps0 || math.Abs(q2-q) > 1e-12 {
				t.Errorf("eps0=%g d=%d: recomputed bound %.12g (q %g vs %g)", eps0, d, e2, q, q2)
			}
		}
	}
}

// TestPrivUnitUnbiased: mean of N reports within zCrit standard errors.
func TestPrivUnitUnbiased(t *testing.T) {
	const n = 40000
	src := NewSeededSource(31)
	for _, tc := range []struct {
		eps0 float64
		x    []float64
	}{
		{1, []float64{0.5, -0.3, 0.1, 0.6}},
		{4, []float64{0, 0, 0}},
		{2, []float64{0.9, 0.1}},
	} {
		r, err := NewPrivUnit(tc.eps0, len(tc.x), 1)
		if err != nil {
			t.Fatal(err)
		}
		sum := make([]float64, len(tc.x))
		sumSq := make([]float64, len(tc.x))
		for range n {
			rep, err := r.Randomize(tc.x, src)
			if err != nil {
				t.Fatal(err)
			}
			z, err := r.Decode(rep)
			if err != nil {
				t.Fatal(err)
			}
			for i, v := range z {
				sum[i] += v
				sumSq[i] += v * v
			}
		}
		for i := range sum {
			mean := sum[i] / n
			se := math.Sqrt((sumSq[i]/n - mean*mean) / n)
			if math.Abs(mean-tc.x[i]) > zCrit*se {
				t.Errorf("eps0=%g coord %d: mean %.5f, want %.5f ± %.5f", tc.eps0, i, mean, tc.x[i], zCrit*se)
			}
		}
	}
}

// TestPrivUnitCapRatio: the event E = {<V,u> ≥ γ} has probability p under
// input u and (1−p)·q/(1−q) under input −u (the cap of −u is disjoint from
// C_γ(u) when γ ≥ 0, so E lies in its complement), a ratio of exactly
// e^WorstCaseLogRatio: the mechanism spends its budget, no more. Both
// frequencies are checked within zCrit standard errors.
func TestPrivUnitCapRatio(t *testing.T) {
	const n = 100000
	for _, d := range []int{3, 200} {
		r, err := NewPrivUnit(2, d, 1)
		if err != nil {
			t.Fatal(err)
		}
		gamma, q, p := r.Cap()
		u := make([]float64, d)
		u[0] = 1
		neg := make([]float64, d)
		neg[0] = -1
		src := NewSeededSource(uint64(d))
		freq := func(x []float64) float64 {
			var hits float64
			for range n {
				rep, _ := r.Randomize(x, src)
				v := math.Float64frombits(binary.LittleEndian.Uint64(rep[1:])) * r.Scale() / r.Radius()
				if v >= gamma {
					hits++
				}
			}
			return hits / n
		}
		for _, tc := range []struct {
			x    []float64
			want float64
		}{{u, p}, {neg, (1 - p) * q / (1 - q)}} {
			got := freq(tc.x)
			se := math.Sqrt(tc.want * (1 - tc.want) / n)
			if math.Abs(got-tc.want) > zCrit*se {
				t.Errorf("d=%d x0=%g: P[cap] = %.5f, want %.5f ± %.5f", d, tc.x[0], got, tc.want, zCrit*se)
			}
		}
		if ratio := math.Log(p / ((1 - p) * q / (1 - q))); math.Abs(ratio-r.WorstCaseLogRatio()) > 1e-9 {
			t.Errorf("d=%d: cap log ratio %.12g, bound %.12g", d, ratio, r.WorstCaseLogRatio())
		}
	}
}

func TestPrivUnitRejectsOffSphere(t *testing.T) {
	r, _ := NewPrivUnit(1, 3, 1)
	rep, err := r.Randomize([]float64{0.1, 0.2, 0.3}, NewSeededSource(1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Decode(rep); err != nil {
		t.Fatal(err)
	}
	bad := append(Report(nil), rep...)
	binary.LittleEndian.PutUint64(bad[1:], math.Float64bits(1e6))
	if _, err := r.Decode(bad); !errors.Is(err, ErrMalformed) {
		t.Errorf("off-sphere report accepted: %v", err)
	}
}
