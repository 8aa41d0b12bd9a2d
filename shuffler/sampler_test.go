package shuffler

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestSamplerDistinctAndInRange(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct{ n, k int }{{1, 1}, {10, 10}, {100, 7}, {1000, 999}} {
		s, err := NewSampler(c.n, c.k)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]int, c.k)
		for trial := 0; trial < 20; trial++ {
			s.Sample(r, out)
			seen := make(map[int]bool, c.k)
			for _, v := range out {
				if v < 0 || v >= c.n || seen[v] {
					t.Fatalf("n=%d k=%d: bad or repeated index %d in %v", c.n, c.k, v, out)
				}
				seen[v] = true
			}
		}
	}
}

// TestSamplerUniform checks that every client is included with
// probability k/n (chi-square test over the inclusion counts; with 19 degrees
// of freedom the threshold 45.3 is exceeded with probability 1e-3 under
// uniformity, and the seed is fixed so the test is deterministic).
func TestSamplerUniform(t *testing.T) {
	const n, k, trials = 20, 5, 40000
	r := rand.New(rand.NewPCG(7, 11))
	s, err := NewSampler(n, k)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]int, k)
	var counts [n]float64
	pairs := 0 // how often clients 0 and 1 are sampled together
	for i := 0; i < trials; i++ {
		s.Sample(r, out)
		has0, has1 := false, false
		for _, v := range out {
			counts[v]++
			has0 = has0 || v == 0
			has1 = has1 || v == 1
		}
		if has0 && has1 {
			pairs++
		}
	}
	expected := float64(trials) * k / n
	chi2 := 0.0
	for _, c := range counts {
		chi2 += (c - expected) * (c - expected) / expected
	}
	if chi2 > 45.3 {
		t.Errorf("inclusion counts not uniform: chi2 = %.1f > 45.3 (counts %v)", chi2, counts)
	}
	// Without replacement, P(0 and 1 both in) = k(k-1)/(n(n-1)).
	p := float64(k*(k-1)) / float64(n*(n-1))
	mean, sd := p*trials, math.Sqrt(p*(1-p)*trials)
	if math.Abs(float64(pairs)-mean) > 4*sd {
		t.Errorf("pair inclusion %d, want %.0f ± %.0f", pairs, mean, 4*sd)
	}
}
