package pld

import (
	"errors"
	"math"
	"testing"
)

// TestAccountantHeterogeneous: two different pairs composed by the
// accountant (add-remove style, both orders) against exact enumeration of
// the product of their products.
func TestAccountantHeterogeneous(t *testing.T) {
	p1, q1 := []float64{0.6, 0.3, 0.1}, []float64{0.2, 0.3, 0.5}
	p2, q2 := []float64{0.7, 0.2, 0.1, 0}, []float64{0.5, 0.2, 0.2, 0.1}
	var a Accountant
	if err := a.AddPMFs(p1, q1, 2, false); err != nil {
		t.Fatal(err)
	}
	if err := a.AddPMFs(p2, q2, 1, false); err != nil {
		t.Fatal(err)
	}
	c, err := a.Compose()
	if err != nil {
		t.Fatal(err)
	}
	// Exact: the pair (p1 x p1 x p2, q1 x q1 x q2) and its reverse.
	prod := func(ps ...[]float64) []float64 {
		out := []float64{1}
		for _, p := range ps {
			var nx []float64
			for _, a := range out {
				for _, b := range p {
					nx = append(nx, a*b)
				}
			}
			out = nx
		}
		return out
	}
	P, Q := prod(p1, p1, p2), prod(q1, q1, q2)
	hs := func(x, y []float64, eps float64) float64 {
		s := 0.0
		for i := range x {
			s += math.Max(0, x[i]-math.Exp(eps)*y[i])
		}
		return s
	}
	for _, eps := range []float64{0, 0.3, 1, 2} {
		ex := math.Max(hs(P, Q, eps), hs(Q, P, eps))
		iv, err := c.Delta(eps)
		if err != nil {
			t.Fatal(err)
		}
		if iv.Lower > ex+1e-15 || iv.Upper < ex-1e-15 {
			t.Errorf("eps %v: exact %v outside %v", eps, ex, iv)
		}
	}
}

// TestCloneEdgeCases: k = n = 1 is binary randomized response itself (the
// symmetric pair is then exact: eps(delta -> 0) = eps0); eps0 = 0 reveals
// nothing; a large eps0 still works.
func TestCloneEdgeCases(t *testing.T) {
	c, err := CloneShuffle(1, 1, 1.5, 1, Options{})
	if err != nil {
		t.Fatal(err)
	}
	iv, err := c.Epsilon(1e-9)
	if err != nil {
		t.Fatal(err)
	}
	if iv.Upper < 1.5-1e-6 || iv.Upper > 1.5+1e-3 {
		t.Errorf("k = n = 1, eps0 = 1.5: epsilon %v, want 1.5", iv)
	}
	z, err := CloneShuffle(100, 10, 0, 50, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if iv, err := z.Epsilon(1e-6); err != nil || iv.Upper != 0 {
		t.Errorf("eps0 = 0: %v, %v; want 0", iv, err)
	}
	// At eps0 = 20 clones are rare (p = e^-20): three rounds cost 3 eps0.
	big, err := CloneShuffle(1000, 1000, 20, 3, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if iv, err := big.Epsilon(1e-6); err != nil || iv.Upper < 60-1e-3 || iv.Upper > 60+1e-2 {
		t.Errorf("eps0 = 20: %v, %v", iv, err)
	}
	// Delta below the mass at +inf: a clear error.
	var a Accountant
	if err := a.AddPMFs([]float64{0.5, 0.5}, []float64{1, 0}, 1, false); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Epsilon(0.1); !errors.Is(err, ErrDeltaTooSmall) {
		t.Errorf("delta below the infinite mass: error %v", err)
	}
}
