package randomizer

import (
	"math"
	"testing"
)

type listSource struct {
	vals  []uint64
	calls int
}

func (l *listSource) Uint64() uint64 {
	v := l.vals[l.calls]
	l.calls++
	return v
}

// TestUniformIndexRejects checks Lemire's rejection region: for
// n = 2^63+1, 2^64 mod n = 2^63−1, and a draw x is rejected iff
// (x·n mod 2^64) < 2^63−1.
func TestUniformIndexRejects(t *testing.T) {
	n := uint64(1)<<63 + 1
	// x = 2: x·n mod 2^64 = 2 < 2^63−1 → rejected; x = 2^63: 2^63·(2^63+1)
	// mod 2^64 = 2^63 ≥ 2^63−1 → accepted, result floor(x·n/2^64) = 2^62.
	src := &listSource{vals: []uint64{2, 1 << 63}}
	if got := UniformIndex(src, n); got != 1<<62 || src.calls != 2 {
		t.Fatalf("UniformIndex = %d after %d draws, want %d after 2", got, src.calls, uint64(1)<<62)
	}
	src = &listSource{vals: []uint64{math.MaxUint64}}
	if got := UniformIndex(src, 10); got != 9 || src.calls != 1 {
		t.Fatalf("UniformIndex(max, 10) = %d", got)
	}
}

// TestSourcesUniform runs a chi-square test (alpha = 1e-6) on UniformIndex
// over 7 cells, and checks bit balance, for both sources. The crypto source
// is not seeded, so this test is random; its false-alarm probability is
// below 2e-6 per run.
func TestSourcesUniform(t *testing.T) {
	for name, src := range map[string]Source{"crypto": NewCryptoSource(), "seeded": NewSeededSource(5)} {
		const n, k = 70000, 7
		counts := make([]float64, k)
		for range n {
			counts[UniformIndex(src, k)]++
		}
		var chi2 float64
		for _, c := range counts {
			e := float64(n) / k
			chi2 += (c - e) * (c - e) / e
		}
		if crit := chiSquareCritical(k-1, 1e-6); chi2 > crit {
			t.Errorf("%s: chi2 %.1f > %.1f", name, chi2, crit)
		}
		var ones float64
		const words = 2000
		for range words {
			ones += float64(popcount(src.Uint64()))
		}
		// ones ~ Bin(128000, 1/2): sd ≈ 179.
		if math.Abs(ones-32*words) > 5.3*math.Sqrt(64*words/4.0) {
			t.Errorf("%s: %v one bits in %d words", name, ones, words)
		}
	}
}

func popcount(x uint64) int {
	c := 0
	for ; x != 0; x &= x - 1 {
		c++
	}
	return c
}

func TestSeededSourceReproducible(t *testing.T) {
	a, b := NewSeededSource(42), NewSeededSource(42)
	for range 100 {
		if a.Uint64() != b.Uint64() {
			t.Fatal("seeded sources with the same seed diverged")
		}
	}
	if NewSeededSource(1).Uint64() == NewSeededSource(2).Uint64() {
		t.Fatal("different seeds gave the same first word")
	}
}
