package shufflegauss

import (
	"math"
	"testing"
)

func TestSubsampledGolden(t *testing.T) {
	g := loadGolden(t)
	if len(g.Subsampled) == 0 {
		t.Fatal("no golden values")
	}
	for _, c := range g.Subsampled {
		s, err := NewSubsampled(c.Sigma, c.N, c.M)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.RDP(float64(c.Order))
		if err != nil {
			t.Fatal(err)
		}
		want := mustParse(t, c.Eps)
		// Compare log-moments (lambda-1)eps: an upper bound, within 1e-13
		// times the order, relative (the rounding slack).
		l1 := float64(c.Order - 1)
		if got < want || (got-want)*l1 > 1e-13*float64(c.Order)*(1+want*l1) {
			t.Errorf("m=%d n=%d sigma=%g order=%d: %.15g, want %.15g (upper, within the rounding slack)", c.M, c.N, c.Sigma, c.Order, got, want)
		}
	}
}

// TestSubsampledProperties: eq. (10) with m = n and gamma = 1 is still a
// valid (looser) bound, never below Theorem 1; the bound grows with m at
// fixed n (more sampled reports, larger gamma); never NaN or negative.
func TestSubsampledProperties(t *testing.T) {
	for _, sigma := range []float64{0.8, 3, 9.48} {
		full, _ := NewShuffle(sigma, 200)
		sub, _ := NewSubsampled(sigma, 200, 200)
		prev := make(map[int]float64)
		for _, m := range []int64{1, 5, 20, 100, 200} {
			// gamma grows with m here, so eq. (10) must not decrease.
			s, _ := NewSubsampled(sigma, 200, m)
			for _, lam := range []int{2, 3, 8, 40} {
				e, err := s.RDP(float64(lam))
				if err != nil || math.IsNaN(e) || e < 0 {
					t.Fatalf("sigma=%g m=%d order=%d: %g %v", sigma, m, lam, e, err)
				}
				if p, ok := prev[lam]; ok && e < p {
					t.Errorf("sigma=%g order=%d: bound fell from %g to %g at m=%d", sigma, lam, p, e, m)
				}
				prev[lam] = e
			}
		}
		for _, lam := range []int{2, 3, 8, 40} {
			a, _ := full.RDP(float64(lam))
			b, _ := sub.RDP(float64(lam))
			if b < a {
				t.Errorf("sigma=%g order=%d: gamma=1 bound %g below Theorem 1 %g", sigma, lam, b, a)
			}
		}
	}
}

func TestSubsampledValidation(t *testing.T) {
	for _, c := range []struct {
		sigma float64
		n, m  int64
	}{{0, 10, 5}, {1, 0, 1}, {1, 10, 0}, {1, 10, 11}, {math.Inf(1), 10, 5}} {
		if _, err := NewSubsampled(c.sigma, c.n, c.m); err == nil {
			t.Errorf("NewSubsampled(%g,%d,%d) accepted", c.sigma, c.n, c.m)
		}
	}
	s, _ := NewSubsampled(1, 10, 5)
	if _, err := s.RDP(0.9); err == nil {
		t.Error("order 0.9 accepted")
	}
}

func FuzzSubsampledRDP(f *testing.F) {
	f.Add(1.0, int64(1000), int64(10), 5.0)
	f.Add(9.48, int64(60000), int64(600), 64.5)
	f.Add(0.4, int64(5), int64(5), 12.0)
	f.Fuzz(func(t *testing.T, sigma float64, n, m int64, order float64) {
		order = math.Mod(math.Abs(order), 200)
		s, err := NewSubsampled(sigma, n%1e9, m%1e9)
		if err != nil {
			return
		}
		e, err := s.RDP(order)
		if err != nil {
			return
		}
		if math.IsNaN(e) || math.IsInf(e, 0) || e < 0 {
			t.Fatalf("sigma=%g n=%d m=%d order=%g: eps=%g", sigma, n, m, order, e)
		}
	})
}
