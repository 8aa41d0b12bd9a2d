package shufflegauss

import (
	"fmt"
	"math"
	"testing"
)

// cksEpsilon is the RDP -> (eps, delta) conversion of the paper's Lemma 2,
// eq. (3) (Canonne-Kamath-Steinke 2020; Balle et al. 2020), for a composed
// RDP value rdp at order lambda.
func cksEpsilon(rdp, lambda, delta float64) float64 {
	return rdp + (math.Log(1/delta)+(lambda-1)*math.Log1p(-1/lambda)-math.Log(lambda))/(lambda-1)
}

// table1 returns the paper's Table 1 quantity: min over orders of the
// converted epsilon after T compositions of the shuffle Gaussian mechanism.
func table1(t testing.TB, s *Shuffle, steps int, orders []int) (float64, int) {
	best, arg := math.Inf(1), 0
	for _, o := range orders {
		e, err := s.RDP(float64(o))
		if err != nil {
			t.Fatal(err)
		}
		if v := cksEpsilon(float64(steps)*e, float64(o), 1.0/60000); v < best {
			best, arg = v, o
		}
	}
	return best, arg
}

func intRange(lo, hi int) []int {
	var r []int
	for o := lo; o <= hi; o++ {
		r = append(r, o)
	}
	return r
}

// TestTable1 reproduces Table 1 of the ICLR'23 submission (n = 60000,
// sigma = 9.48, delta = 1/n, orders 2..30): 0.22820, 0.22820, 0.22822 for
// T = 1, 2, 7 (five digits), and matches the mpmath oracle.
func TestTable1(t *testing.T) {
	s, _ := NewShuffle(9.48, 60000)
	g := loadGolden(t)
	paper := map[int]string{1: "0.22820", 2: "0.22820", 3: "0.22821", 4: "0.22821", 5: "0.22821", 6: "0.22822", 7: "0.22822"}
	for T := 1; T <= 7; T++ {
		eps, order := table1(t, s, T, intRange(2, 30))
		if got := fmt.Sprintf("%.5f", eps); got != paper[T] {
			t.Errorf("T=%d: eps %s (order %d), paper %s", T, got, order, paper[T])
		}
		if order != 30 {
			t.Errorf("T=%d: optimum at order %d, expected the cap 30", T, order)
		}
	}
	for _, c := range g.Table1 {
		eps, order := table1(t, s, c.Steps, intRange(2, 30))
		want := mustParse(t, c.Epsilon)
		if eps < want || eps > want+1e-12 || order != c.Order {
			t.Errorf("T=%d: %.15g at %d, mpmath %.15g at %d", c.Steps, eps, order, want, c.Order)
		}
	}
}

// TestTable1LargeOrders: the same setting without the paper's cap at
// order 30. The optimum moves to a large order and epsilon drops far below
// the published 0.2282.
func TestTable1LargeOrders(t *testing.T) {
	if testing.Short() {
		t.Skip("orders up to 4096")
	}
	s, _ := NewShuffle(9.48, 60000)
	g := loadGolden(t)
	if len(g.Table1Uncapped) != 3 {
		t.Fatal("missing golden table1_uncapped")
	}
	for _, c := range g.Table1Uncapped {
		eps, order := table1(t, s, c.Steps, intRange(2, 4096))
		want := mustParse(t, c.Epsilon)
		if order != c.Order || eps < want || eps > want+1e-10 {
			t.Errorf("T=%d: eps %.15g at order %d, mpmath %.15g at %d", c.Steps, eps, order, want, c.Order)
		}
	}
}
