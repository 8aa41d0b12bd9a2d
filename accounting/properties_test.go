package accounting

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func epsilonOf(t *testing.T, m RDP, steps int64, delta float64, orders []float64) Guarantee {
	t.Helper()
	a, err := NewAccountant(orders)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Compose64(m, steps); err != nil {
		t.Fatal(err)
	}
	g, err := a.Epsilon(delta)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

var propertySettings = []struct {
	n, k int64
	eps0 float64
}{
	{1e6, 1000, 2}, {1e5, 1000, 3}, {1e4, 100, 0.5}, {60000, 10000, 1.5}, {1000, 1000, 1}, {50, 10, 5},
}

func TestMonotoneInSteps(t *testing.T) {
	for _, s := range propertySettings {
		for _, b := range []string{BoundNeurIPS21Upper, BoundCCS21WBK19, BoundBest} {
			if b == BoundCCS21WBK19 && s.n == s.k {
				continue
			}
			m, err := NewBound(MechanismSubsampledShuffle, b, s.n, s.k, s.eps0)
			if err != nil {
				t.Fatal(err)
			}
			prev := -1.0
			for _, T := range []int64{1, 2, 10, 100, 1000, 10000, 100000} {
				e := epsilonOf(t, m, T, 1e-6, nil).Epsilon
				if e < prev {
					t.Errorf("%s %+v: eps(T=%d) = %g < eps at fewer steps %g", b, s, T, e, prev)
				}
				prev = e
			}
		}
	}
}

func TestMonotoneInK(t *testing.T) {
	const n = 100000
	for _, b := range []string{BoundNeurIPS21Upper, BoundBest} {
		prev := -1.0
		for _, k := range []int64{10, 100, 1000, 5000, 20000, 100000} {
			m, err := NewBound(MechanismSubsampledShuffle, b, n, k, 1)
			if err != nil {
				t.Fatal(err)
			}
			e := epsilonOf(t, m, 1000, 1e-6, nil).Epsilon
			if e < prev*(1-1e-12) {
				t.Errorf("%s: eps(k=%d) = %g < eps at smaller k %g", b, k, e, prev)
			}
			prev = e
		}
	}
}

// TestMonotoneInN: more clients can only help. At fixed k the sampling
// ratio k/n falls as n grows (every subsampled bound is non-increasing in
// n), and without subsampling more reports hide each one (CCS'21 bounds are
// non-increasing in n).
func TestMonotoneInN(t *testing.T) {
	ns := []int64{1000, 3000, 10000, 100000, 1000000, 10000000}
	for _, b := range []string{BoundNeurIPS21Upper, BoundCCS21WBK19, BoundBest} {
		prev := math.Inf(1)
		for _, n := range ns {
			m, err := NewBound(MechanismSubsampledShuffle, b, n, 1000, 2)
			if err != nil {
				t.Fatal(err)
			}
			e := epsilonOf(t, m, 1000, 1e-6, nil).Epsilon
			if e > prev*(1+1e-12) {
				t.Errorf("%s k=1000: eps(n=%d) = %g > eps at smaller n %g", b, n, e, prev)
			}
			prev = e
		}
	}
	for _, b := range []string{BoundCCS21Upper1, BoundCCS21Upper2, BoundBest} {
		prev := math.Inf(1)
		for _, n := range ns {
			m, err := NewBound(MechanismShuffle, b, n, n, 1)
			if err != nil {
				t.Fatal(err)
			}
			e := epsilonOf(t, m, 100, 1e-6, nil).Epsilon
			if e > prev*(1+1e-12) {
				t.Errorf("shuffle %s: eps(n=%d) = %g > eps at smaller n %g", b, n, e, prev)
			}
			prev = e
		}
	}
}

func TestUpperAboveLowerAtEveryOrder(t *testing.T) {
	for _, s := range propertySettings {
		lo, _ := SubsampledShuffleLower(s.n, s.k, s.eps0)
		uppers := []string{BoundNeurIPS21Upper, BoundPureDP, BoundBest}
		if s.n != s.k {
			uppers = append(uppers, BoundCCS21WBK19)
		} else {
			uppers = append(uppers, BoundCCS21Upper1, BoundCCS21Upper2)
		}
		for _, b := range uppers {
			up, _ := NewBound(MechanismSubsampledShuffle, b, s.n, s.k, s.eps0)
			for _, o := range []float64{2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 256, 512, 1024} {
				u, err := up.RDP(o)
				if err != nil {
					t.Fatal(err)
				}
				l, err := lo.RDP(o)
				if err != nil {
					t.Fatal(err)
				}
				if u < l {
					t.Errorf("%+v order %g: upper %s = %g < lower %g", s, o, b, u, l)
				}
			}
		}
	}
}

func TestBestIsMinimum(t *testing.T) {
	for _, s := range propertySettings {
		best, _ := Best(s.n, s.k, s.eps0)
		for _, o := range DefaultOrders() {
			v, win, err := best.RDPWinner(o)
			if err != nil {
				t.Fatalf("%+v order %g: %v", s, o, err)
			}
			for _, p := range best.Parts() {
				pv, err := p.RDP(o)
				if errors.Is(err, ErrOrderUnsupported) {
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				if v > pv {
					t.Errorf("%+v order %g: best %g (%s) > %s %g", s, o, v, win, p.Name(), pv)
				}
			}
		}
	}
}

func TestEpsilonDeltaRoundTrip(t *testing.T) {
	m, _ := Best(1e6, 1000, 2)
	a, _ := NewAccountant(nil)
	if err := a.Compose(m, 5000); err != nil {
		t.Fatal(err)
	}
	for _, delta := range []float64{1e-10, 1e-8, 1e-5, 0.01} {
		g, err := a.Epsilon(delta)
		if err != nil {
			t.Fatal(err)
		}
		d, err := a.Delta(g.Epsilon)
		if err != nil {
			t.Fatal(err)
		}
		if d.Delta > delta*(1+1e-9) {
			t.Errorf("Delta(Epsilon(%g)=%g) = %g > %g", delta, g.Epsilon, d.Delta, delta)
		}
		if d.Delta < delta*0.5 {
			t.Errorf("Delta(Epsilon(%g)) = %g: round trip far from tight", delta, d.Delta)
		}
	}
}

func TestHeterogeneousComposition(t *testing.T) {
	m1, _ := Best(1e6, 1000, 2)
	m2, _ := Best(1e6, 2000, 1)
	a, _ := NewAccountant(nil)
	_ = a.Compose(m1, 100)
	_ = a.Compose(m2, 50)
	b, _ := NewAccountant(nil)
	_ = b.Compose(m2, 50)
	for i := 0; i < 100; i++ {
		_ = b.Compose(m1, 1)
	}
	ga, _ := a.Epsilon(1e-6)
	gb, _ := b.Epsilon(1e-6)
	if math.Abs(ga.Epsilon-gb.Epsilon) > 1e-9*ga.Epsilon {
		t.Errorf("composition order matters: %g vs %g", ga.Epsilon, gb.Epsilon)
	}
	one, _ := NewAccountant(nil)
	_ = one.Compose(m1, 100)
	g1, _ := one.Epsilon(1e-6)
	if ga.Epsilon <= g1.Epsilon {
		t.Errorf("adding rounds did not increase epsilon: %g <= %g", ga.Epsilon, g1.Epsilon)
	}
	if ev := a.Events(); len(ev) != 2 || ev[0].Count != 100 || ev[1].Count != 50 {
		t.Errorf("events = %+v", ev)
	}
}

func TestInvalidInput(t *testing.T) {
	cases := []struct {
		name    string
		n, k    int64
		eps0    float64
		wantSub string
	}{
		{"n", 0, 1, 1, "n must"},
		{"k>n", 10, 11, 1, "k must"},
		{"k0", 10, 0, 1, "k must"},
		{"eps0<0", 10, 5, -1, "eps0"},
		{"eps0 NaN", 10, 5, math.NaN(), "eps0"},
		{"eps0 Inf", 10, 5, math.Inf(1), "eps0"},
	}
	for _, c := range cases {
		for _, b := range BoundNames() {
			if _, err := NewBound(MechanismSubsampledShuffle, b, c.n, c.k, c.eps0); err == nil || !contains(err.Error(), c.wantSub) {
				t.Errorf("%s/%s: err = %v, want mention of %q", c.name, b, err, c.wantSub)
			}
		}
	}
	up, _ := SubsampledShuffleUpper(1e6, 1000, 2)
	if _, err := up.RDP(2.5); !errors.Is(err, ErrOrderUnsupported) {
		t.Errorf("non-integer order: err = %v", err)
	}
	for _, o := range []float64{1, 0.5, math.NaN(), math.Inf(1)} {
		if _, err := up.RDP(o); err == nil {
			t.Errorf("order %g accepted", o)
		}
	}
	a, _ := NewAccountant(nil)
	for _, d := range []float64{0, 1, -1, math.NaN()} {
		if _, err := a.Epsilon(d); err == nil || !contains(err.Error(), "delta") {
			t.Errorf("delta %g: err = %v", d, err)
		}
	}
	if _, err := a.Delta(-1); err == nil || !contains(err.Error(), "epsilon") {
		t.Errorf("epsilon -1: err = %v", err)
	}
	if err := a.Compose(up, -1); err == nil {
		t.Error("negative count accepted")
	}
	if _, err := NewAccountant([]float64{2, 1}); err == nil {
		t.Error("order 1 accepted")
	}
	lo, _ := SubsampledShuffleLower(1e6, 1000, 2)
	_ = a.Compose(up, 1)
	if err := a.Compose(lo, 1); err == nil {
		t.Error("lower bound composed with upper bound")
	}
	if _, err := NewBound(MechanismSubsampledShuffle, BoundCCS21Lower, 1e6, 1000, 2); err == nil {
		t.Error("ccs21-lower accepted for the subsampled mechanism")
	}
	if _, err := ParseOrders("5:2"); err == nil {
		t.Error("orders 5:2 accepted")
	}
	if _, err := ParseOrders("2,abc"); err == nil {
		t.Error("orders 2,abc accepted")
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func TestGridEdgeWarning(t *testing.T) {
	// Few rounds of a tiny mechanism: the optimum wants orders beyond 2..10.
	m, _ := Best(1e7, 1000, 0.5)
	orders, _ := ParseOrders("2:10")
	if g := epsilonOf(t, m, 1, 1e-8, orders); !g.AtGridEdge || g.Order != 10 {
		t.Errorf("expected an edge warning at order 10, got %+v", g)
	}
	// The Fig. 2a setting has its optimum inside the default grid (order 120).
	fig2a, _ := Best(1e6, 1000, 2)
	if g := epsilonOf(t, fig2a, 100000, 1e-8, nil); g.AtGridEdge {
		t.Errorf("default grid: unexpected edge warning %+v", g)
	}
}

func TestLargeParametersFinite(t *testing.T) {
	// n = 1e9, k = 1e6, eps0 = 10, orders to 4096: no NaN, no Inf.
	for _, b := range []string{BoundNeurIPS21Upper, BoundNeurIPS21Lower, BoundCCS21WBK19, BoundBest} {
		m, err := NewBound(MechanismSubsampledShuffle, b, 1e9, 1e6, 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range []float64{2, 100, 1024, 4096} {
			v, err := m.RDP(o)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				t.Errorf("%s order %g: %g, %v", b, o, v, err)
			}
		}
	}
}
