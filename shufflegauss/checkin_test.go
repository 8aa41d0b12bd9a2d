package shufflegauss

import (
	"math"
	"testing"

	"github.com/shuffledp/shuffledp/internal/logmath"
)

// directCheckIn evaluates eq. (11) (plus the k = 0 term) by summing over
// every k, for small n.
func directCheckIn(t *testing.T, sigma float64, n int64, gamma float64, lambda int) float64 {
	t.Helper()
	terms := []float64{logBinomPMF(0, n, gamma)}
	for k := int64(1); k <= n; k++ {
		s, _ := NewShuffle(sigma, k)
		le, err := subsampledLogMoment(s, gamma, lambda)
		if err != nil {
			t.Fatal(err)
		}
		terms = append(terms, logBinomPMF(k, n, gamma)+le)
	}
	return logmath.LogSumExp(terms)
}

func TestCheckInMixtureMatchesDirectSum(t *testing.T) {
	for _, c := range []struct {
		sigma float64
		n     int64
		gamma float64
	}{{1, 30, 0.3}, {3, 12, 0.9}, {0.8, 50, 0.05}} {
		ci, _ := NewCheckIn(c.sigma, c.n, c.gamma, CheckInMixture)
		if err := ci.SetResolution(0); err != nil {
			t.Fatal(err)
		}
		coarse, _ := NewCheckIn(c.sigma, c.n, c.gamma, CheckInMixture)
		ch, _ := NewCheckIn(c.sigma, c.n, c.gamma, CheckInChernoff)
		for _, lam := range []int{2, 3, 7, 20} {
			want := directCheckIn(t, c.sigma, c.n, c.gamma, lam)
			got, err := ci.LogMoment(lam)
			if err != nil {
				t.Fatal(err)
			}
			if got < want || got > want+1e-12*(1+want) {
				t.Errorf("%+v order %d: mixture %.15g, direct %.15g", c, lam, got, want)
			}
			gc, _ := coarse.LogMoment(lam)
			if gc < want {
				t.Errorf("%+v order %d: coarse mixture %.15g below exact %.15g", c, lam, gc, want)
			}
			g13, _ := ch.LogMoment(lam)
			if g13 < want {
				t.Errorf("%+v order %d: eq. 13 %.15g below eq. 11 %.15g", c, lam, g13, want)
			}
		}
	}
}

// TestCheckInBlocksConservative: at a population where per-k evaluation is
// still affordable, the geometric blocks are an upper bound within 2%.
func TestCheckInBlocksConservative(t *testing.T) {
	exact, _ := NewCheckIn(2, 3000, 0.1, CheckInMixture)
	_ = exact.SetResolution(0)
	coarse, _ := NewCheckIn(2, 3000, 0.1, CheckInMixture)
	for _, lam := range []int{2, 8, 32} {
		e, _ := exact.LogMoment(lam)
		c, _ := coarse.LogMoment(lam)
		if c < e || c > e*1.02+1e-15 {
			t.Errorf("order %d: blocks %.10g vs exact %.10g", lam, c, e)
		}
	}
}

func TestCheckInValidation(t *testing.T) {
	if _, err := NewCheckIn(1, 10, 0, CheckInMixture); err == nil {
		t.Error("rate 0 accepted")
	}
	if _, err := NewCheckIn(1, 10, 1.5, CheckInMixture); err == nil {
		t.Error("rate 1.5 accepted")
	}
	if _, err := NewCheckIn(1, 0, 0.5, CheckInMixture); err == nil {
		t.Error("n 0 accepted")
	}
	if _, err := NewCheckIn(-1, 10, 0.5, CheckInMixture); err == nil {
		t.Error("sigma -1 accepted")
	}
	c, _ := NewCheckIn(1, 10, 0.5, CheckInMixture)
	if err := c.SetResolution(1); err == nil {
		t.Error("resolution 1 accepted")
	}
}

func FuzzCheckInRDP(f *testing.F) {
	f.Add(1.0, int64(100), 0.1, 4.0, false)
	f.Add(5.0, int64(60000), 0.1, 12.5, true)
	f.Fuzz(func(t *testing.T, sigma float64, n int64, rate, order float64, chernoff bool) {
		order = math.Mod(math.Abs(order), 40)
		n %= 100000
		m := CheckInMixture
		if chernoff {
			m = CheckInChernoff
		}
		c, err := NewCheckIn(sigma, n, rate, m)
		if err != nil {
			return
		}
		e, err := c.RDP(order)
		if err != nil {
			return
		}
		if math.IsNaN(e) || math.IsInf(e, 0) || e < 0 {
			t.Fatalf("sigma=%g n=%d rate=%g order=%g: eps=%g", sigma, n, rate, order, e)
		}
	})
}
