package pld

import (
	"math"
	"sort"
	"testing"
)

// The exact (eps, delta) of the subsampled shuffle of d-ary randomized
// response, by enumeration: n clients with inputs in {0..d-1}, k sampled
// uniformly without replacement each round, each reports RR(input) (the
// true value with probability e^eps0/(e^eps0+d-1), each other value with
// 1/(e^eps0+d-1)), the adversary sees the histogram of the k reports. T
// rounds are independent. Neighbours differ in one client's input.

// rrHistDist returns the distribution over histograms (encoded as a
// base-(k+1) integer of the counts of values 0..d-2; the last count is
// implied) of one round on dataset x.
func rrHistDist(x []int, k, d int, eps0 float64) map[int]float64 {
	n := len(x)
	pt := math.Exp(eps0) / (math.Exp(eps0) + float64(d-1))
	po := 1 / (math.Exp(eps0) + float64(d-1))
	out := map[int]float64{}
	// Enumerate k-subsets.
	var subsets [][]int
	var rec func(start int, cur []int)
	rec = func(start int, cur []int) {
		if len(cur) == k {
			subsets = append(subsets, append([]int(nil), cur...))
			return
		}
		for i := start; i < n; i++ {
			rec(i+1, append(cur, i))
		}
	}
	rec(0, nil)
	w := 1 / float64(len(subsets))
	for _, s := range subsets {
		// Distribution of the count vector: convolve the clients' RR.
		dist := map[[8]int]float64{{}: 1}
		for _, i := range s {
			next := map[[8]int]float64{}
			for h, p := range dist {
				for y := 0; y < d; y++ {
					q := po
					if y == x[i] {
						q = pt
					}
					h2 := h
					h2[y]++
					next[h2] += p * q
				}
			}
			dist = next
		}
		for h, p := range dist {
			code := 0
			for y := 0; y < d-1; y++ {
				code = code*(k+1) + h[y]
			}
			out[code] += w * p
		}
	}
	return out
}

// productPMFs returns the T-fold products of the two distributions over the
// union of their supports, as aligned vectors.
func productPMFs(a, b map[int]float64, T int) (pa, pb []float64) {
	keys := map[int]bool{}
	for c := range a {
		keys[c] = true
	}
	for c := range b {
		keys[c] = true
	}
	var ks []int
	for c := range keys {
		ks = append(ks, c)
	}
	sort.Ints(ks)
	pa, pb = []float64{1}, []float64{1}
	for range T {
		var na, nb []float64
		for i := range pa {
			for _, c := range ks {
				na = append(na, pa[i]*a[c])
				nb = append(nb, pb[i]*b[c])
			}
		}
		pa, pb = na, nb
	}
	return pa, pb
}

// exactEps returns the smallest eps >= 0 with H_{e^eps}(p||q) <= delta, by
// bisection (H is continuous and decreasing in eps).
func exactEps(p, q []float64, delta float64) float64 {
	H := func(eps float64) float64 {
		s := 0.0
		a := math.Exp(eps)
		for i := range p {
			s += math.Max(0, p[i]-a*q[i])
		}
		return s
	}
	if H(0) <= delta {
		return 0
	}
	lo, hi := 0.0, 1.0
	for H(hi) > delta {
		hi *= 2
	}
	for range 200 {
		mid := (lo + hi) / 2
		if H(mid) > delta {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// worstExact returns the largest exact epsilon over every ordered pair of
// neighbouring datasets.
func worstExact(n, k, d int, eps0 float64, T int, delta float64) float64 {
	worst := 0.0
	seen := map[string]bool{}
	x := make([]int, n)
	var all [][]int
	var rec func(i int)
	rec = func(i int) {
		if i == n {
			all = append(all, append([]int(nil), x...))
			return
		}
		for v := 0; v < d; v++ {
			x[i] = v
			rec(i + 1)
		}
	}
	rec(0)
	for _, ds := range all {
		for i := 0; i < n; i++ {
			for v := 0; v < d; v++ {
				if v == ds[i] {
					continue
				}
				nb := append([]int(nil), ds...)
				nb[i] = v
				// The output law depends on the multiset of the others and
				// on the changed client's two values.
				others := append(append([]int(nil), ds[:i]...), ds[i+1:]...)
				sort.Ints(others)
				key := string(rune('a'+ds[i])) + string(rune('a'+v))
				for _, o := range others {
					key += string(rune('a' + o))
				}
				if seen[key] {
					continue
				}
				seen[key] = true
				pa, pb := productPMFs(rrHistDist(ds, k, d, eps0), rrHistDist(nb, k, d, eps0), T)
				worst = math.Max(worst, exactEps(pa, pb, delta))
			}
		}
	}
	return worst
}

// clonePMFs returns the clone pair (P_g, Q_c) of k of n at eps0 as aligned
// vectors over (c, x), from the formulas of docs/proofs/clones-rdp.md
// (independently of clonePositive).
func clonePMFs(n, k int, eps0 float64) (pg, qc []float64) {
	p := math.Exp(-eps0)
	alpha := math.Exp(eps0) / (math.Exp(eps0) + 1)
	g := float64(k) / float64(n)
	binom := func(m, j int) float64 {
		if j < 0 || j > m {
			return 0
		}
		return math.Exp(lgamma(float64(m+1)) - lgamma(float64(j+1)) - lgamma(float64(m-j+1)))
	}
	m := k - 1
	for c := 0; c <= m; c++ {
		wc := binom(m, c) * math.Pow(p, float64(c)) * math.Pow(1-p, float64(m-c))
		b := func(x int) float64 { return binom(c, x) * math.Pow(0.5, float64(c)) }
		for x := 0; x <= c+1; x++ {
			q := alpha*b(x) + (1-alpha)*b(x-1)
			pc := alpha*b(c+1-x) + (1-alpha)*b(c-x)
			qc = append(qc, wc*q)
			pg = append(pg, wc*((1-g)*q+g*pc))
		}
	}
	return pg, qc
}

func lgamma(x float64) float64 { v, _ := math.Lgamma(x); return v }

// TestBruteForceCloneSymmetric: the symmetric clone pair's pessimistic
// epsilon is at least the exact epsilon of the subsampled shuffle of
// binary and 3-ary randomized response, for every neighbouring pair (both
// orders), over T = 1, 2, 4 rounds; the naive composition of (P_g, Q_c)
// in one direction is shown below the exact value (the negative control).
func TestBruteForceCloneSymmetric(t *testing.T) {
	const n, eps0 = 4, 2.0
	type cas struct{ k, d, T int }
	var cases []cas
	for _, d := range []int{2, 3} {
		for _, k := range []int{1, 2} {
			for _, T := range []int{1, 2, 4} {
				if d == 3 && k == 2 && T == 4 {
					continue // 6^4 outcomes per pair: covered at T <= 2
				}
				cases = append(cases, cas{k, d, T})
			}
		}
	}
	deltas := []float64{0.1, 0.01, 1e-3}
	for _, c := range cases {
		comp, err := CloneShuffle(n, int64(c.k), eps0, c.T, Options{Grid: 1e-3})
		if err != nil {
			t.Fatal(err)
		}
		for _, delta := range deltas {
			exact := worstExact(n, c.k, c.d, eps0, c.T, delta)
			iv, err := comp.Epsilon(delta)
			if err != nil {
				t.Fatal(err)
			}
			if iv.Upper < exact {
				t.Errorf("n=%d k=%d d=%d T=%d delta=%g: PLD upper %.6f < exact %.6f", n, c.k, c.d, c.T, delta, iv.Upper, exact)
			}
			t.Logf("n=%d k=%d d=%d T=%d delta=%g: exact %.6f, PLD [%.6f, %.6f]", n, c.k, c.d, c.T, delta, exact, iv.Lower, iv.Upper)
		}
	}
}

// TestNaiveCloneCompositionFails is the negative control: composing the
// PLD of (P_g, Q_c) in one direction, or taking the worse of its two
// directions, is below the exact epsilon after two rounds. At n = 4,
// k = 1, eps0 = 2, delta = 0.1 the exact epsilon of 3-ary randomized
// response is 0.800 where the naive composition gives 0.636. (Binary
// randomized response attains (P_g, Q_c) exactly at k = 1, so its exact
// value is the naive one, 0.636: the failure needs a third output.) The
// symmetric pair is above both.
func TestNaiveCloneCompositionFails(t *testing.T) {
	const n, k, eps0, T, delta = 4, 1, 2.0, 2, 0.1
	exact3 := worstExact(n, k, 3, eps0, T, delta)
	exact2 := worstExact(n, k, 2, eps0, T, delta)
	if math.Abs(exact3-0.800) > 5e-4 {
		t.Errorf("exact epsilon of 3-ary RR %.6f, want 0.800", exact3)
	}
	pg, qc := clonePMFs(n, k, eps0)
	h := 1e-4
	fwd, err := FromPMFs(pg, qc, h)
	if err != nil {
		t.Fatal(err)
	}
	rev, err := FromPMFs(qc, pg, h)
	if err != nil {
		t.Fatal(err)
	}
	naive := 0.0
	for _, b := range []Bracket{fwd, rev} {
		c, err := b.SelfCompose(T)
		if err != nil {
			t.Fatal(err)
		}
		iv, err := c.Epsilon(delta)
		if err != nil {
			t.Fatal(err)
		}
		naive = math.Max(naive, iv.Upper)
	}
	if math.Abs(naive-0.636) > 5e-4 {
		t.Errorf("naive composition %.6f, want 0.636", naive)
	}
	if !(naive < exact3-0.1) {
		t.Errorf("negative control: naive %.6f is not below the exact %.6f", naive, exact3)
	}
	if math.Abs(naive-exact2) > 1e-3 {
		t.Errorf("binary RR exact %.6f, want the naive value %.6f (it attains the pair)", exact2, naive)
	}
	sym, err := Symmetric(pg, qc, h)
	if err != nil {
		t.Fatal(err)
	}
	c, err := sym.SelfCompose(T)
	if err != nil {
		t.Fatal(err)
	}
	iv, err := c.Epsilon(delta)
	if err != nil {
		t.Fatal(err)
	}
	if iv.Upper < exact3 {
		t.Errorf("symmetric pair %.6f below exact %.6f", iv.Upper, exact3)
	}
	// The clone constructor and the generic symmetric constructor agree.
	cs, err := CloneShuffle(n, k, eps0, T, Options{Grid: h})
	if err != nil {
		t.Fatal(err)
	}
	iv2, err := cs.Epsilon(delta)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(iv2.Upper-iv.Upper) > 1e-6 || math.Abs(iv2.Lower-iv.Lower) > 1e-6 {
		t.Errorf("CloneShuffle %v, Symmetric %v", iv2, iv)
	}
	t.Logf("exact 3-ary %.6f, binary %.6f, naive %.6f, symmetric %v, CloneShuffle %v", exact3, exact2, naive, iv, iv2)
}
