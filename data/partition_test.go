package data

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// partitionLabels is the label function of the first n synthetic examples
// of seed 5 (uniform over 10 classes).
func partitionLabels(i int) int { return SyntheticLabel(5, i) }

// assignAll returns every client's examples of a.
func assignAll(a Assignment) [][]int {
	out := make([][]int, a.Clients)
	for c := range out {
		out[c] = a.Examples(c, nil)
	}
	return out
}

// TestPartitionDisjointSizes: for every kind, every client holds exactly M
// examples and the clients' examples are the population 0..n*M-1, each
// exactly once; the same seed gives the same assignment, another seed
// another (but index, which has no randomness).
func TestPartitionDisjointSizes(t *testing.T) {
	const clients, m = 60, 12
	for _, spec := range []string{"", "index", "iid", "dirichlet:0.1", "dirichlet:1", "dirichlet:100", "shards:1", "shards:2", "shards:3", "shards:12"} {
		p, err := ParsePartition(spec)
		if err != nil {
			t.Fatalf("%q: %v", spec, err)
		}
		a, err := p.Assign(clients, m, 10, partitionLabels, 7)
		if err != nil {
			t.Fatalf("%q: %v", spec, err)
		}
		seen := make([]int, clients*m)
		for c, ex := range assignAll(a) {
			if len(ex) != m {
				t.Fatalf("%q: client %d holds %d examples, want %d", spec, c, len(ex), m)
			}
			for _, i := range ex {
				if i < 0 || i >= clients*m {
					t.Fatalf("%q: client %d holds example %d outside the population", spec, c, i)
				}
				seen[i]++
			}
		}
		for i, k := range seen {
			if k != 1 {
				t.Fatalf("%q: example %d held by %d clients", spec, i, k)
			}
		}
		again, _ := p.Assign(clients, m, 10, partitionLabels, 7)
		other, _ := p.Assign(clients, m, 10, partitionLabels, 8)
		if !slices.EqualFunc(assignAll(a), assignAll(again), slices.Equal) {
			t.Errorf("%q: the same seed gave another assignment", spec)
		}
		if random := p.Kind != "" && p.Kind != PartitionIndex; random == slices.EqualFunc(assignAll(a), assignAll(other), slices.Equal) {
			t.Errorf("%q: another seed gave the same assignment: %v (want %v)", spec, !random, random)
		}
	}
}

// TestPartitionIndexIsToday: the default partition at M = 1 is client i =
// example i, and at M is client i = examples iM..iM+M-1.
func TestPartitionIndexIsToday(t *testing.T) {
	a, err := Partition{}.Assign(50, 1, 0, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	for c := range 50 {
		if ex := a.Examples(c, nil); len(ex) != 1 || ex[0] != c {
			t.Fatalf("client %d holds %v", c, ex)
		}
	}
	b := IndexAssignment(4, 3)
	if got := b.Examples(2, []int{-1}); !slices.Equal(got, []int{-1, 6, 7, 8}) {
		t.Errorf("Examples(2) appended %v", got)
	}
}

// labelSkew is the mean over clients of the total-variation distance
// between the client's label histogram and the population's.
func labelSkew(a Assignment, label func(int) int, classes int) float64 {
	pop := make([]float64, classes)
	for i := range a.Clients * a.PerClient {
		pop[label(i)]++
	}
	for y := range pop {
		pop[y] /= float64(a.Clients * a.PerClient)
	}
	var total float64
	h := make([]float64, classes)
	for c := range a.Clients {
		clear(h)
		for _, i := range a.Examples(c, nil) {
			h[label(i)]++
		}
		var tv float64
		for y := range h {
			tv += math.Abs(h[y]/float64(a.PerClient) - pop[y])
		}
		total += tv / 2
	}
	return total / float64(a.Clients)
}

// TestDirichletSkew: label skew is measurable and ordered by alpha. With
// M = 50 of 10 uniform classes, an iid client's histogram is off the
// population's by sampling noise alone (TV about 0.17); dirichlet:0.1
// puts most of a client's examples in one or two classes (TV above 0.6),
// dirichlet:1000 is close to iid.
func TestDirichletSkew(t *testing.T) {
	const clients, m = 200, 50
	skew := map[string]float64{}
	for _, spec := range []string{"iid", "dirichlet:0.1", "dirichlet:1", "dirichlet:1000"} {
		p, _ := ParsePartition(spec)
		a, err := p.Assign(clients, m, 10, partitionLabels, 3)
		if err != nil {
			t.Fatal(err)
		}
		skew[spec] = labelSkew(a, partitionLabels, 10)
	}
	t.Logf("mean TV distance to the population's label distribution: %v", skew)
	if !(skew["iid"] < 0.25) || !(skew["dirichlet:1000"] < 0.25) {
		t.Errorf("iid-like partitions skewed: %v", skew)
	}
	if !(skew["dirichlet:0.1"] > 0.6) || !(skew["dirichlet:1"] > skew["dirichlet:1000"]+0.1) || !(skew["dirichlet:0.1"] > skew["dirichlet:1"]) {
		t.Errorf("dirichlet skew not measurable or not ordered by alpha: %v", skew)
	}
}

// TestShardsLabels: shards:S gives each client at most 2S labels (a shard
// straddles at most two), at most S+1 on average over clients, and far
// fewer than an iid client sees.
func TestShardsLabels(t *testing.T) {
	const clients, m = 100, 60
	for _, s := range []int{1, 2, 3} {
		p := Partition{Kind: PartitionShards, Shards: s}
		a, err := p.Assign(clients, m, 10, partitionLabels, 11)
		if err != nil {
			t.Fatal(err)
		}
		var sum, most int
		for c := range clients {
			labels := map[int]bool{}
			for _, i := range a.Examples(c, nil) {
				labels[partitionLabels(i)] = true
			}
			sum += len(labels)
			most = max(most, len(labels))
		}
		mean := float64(sum) / clients
		t.Logf("shards:%d: %.2f labels a client on average, at most %d", s, mean, most)
		if most > 2*s || mean > float64(s)+1 {
			t.Errorf("shards:%d: %.2f labels a client on average, at most %d", s, mean, most)
		}
	}
}

// TestPartitionRefused: bad values are refused naming the flag.
func TestPartitionRefused(t *testing.T) {
	for _, s := range []string{"dirichlet", "dirichlet:0", "dirichlet:-1", "dirichlet:inf", "dirichlet:NaN", "dirichlet:x",
		"shards", "shards:0", "shards:1.5", "iid:3", "index:1", "noniid", "Dirichlet:1"} {
		if _, err := ParsePartition(s); err == nil || !strings.Contains(err.Error(), "partition") {
			t.Errorf("%q: err = %v, want one naming partition", s, err)
		}
	}
	p := Partition{Kind: PartitionShards, Shards: 4}
	for _, c := range []struct {
		clients, m int
		flag       string
	}{{0, 4, "clients"}, {10, 0, "examples-per-client"}, {10, 6, "examples-per-client"}, {1 << 20, 1 << 12, "examples-per-client"}} {
		if err := p.Check(c.clients, c.m); err == nil || !strings.Contains(err.Error(), c.flag) {
			t.Errorf("Check(%d, %d) = %v, want an error naming %s", c.clients, c.m, err, c.flag)
		}
	}
	if _, err := (Partition{Kind: PartitionDirichlet, Alpha: 1}).Assign(10, 2, 10, nil, 1); err == nil {
		t.Error("dirichlet without labels accepted")
	}
	for _, s := range []string{"index", "iid", "dirichlet:0.5", "shards:2", "dirichlet:1e-05"} {
		if p, err := ParsePartition(s); err != nil || p.String() != s {
			t.Errorf("ParsePartition(%q).String() = %q, %v", s, p.String(), err)
		}
	}
}

// TestLogGammaMoments: Gamma(shape, 1) has mean shape and variance shape;
// the sample mean of 200,000 variates lies within 5 standard errors, for
// shapes below 1 (the boost) and above. Negative control: the variates of
// shape+1 are refused by the same check.
func TestLogGammaMoments(t *testing.T) {
	const draws = 200_000
	for _, shape := range []float64{0.05, 0.5, 1, 3.5} {
		rng := rand.New(rand.NewPCG(1, uint64(shape*1000)))
		var s, s2 float64
		for range draws {
			g := math.Exp(LogGamma(rng, shape))
			s += g
			s2 += g * g
		}
		mean := s / draws
		v := s2/draws - mean*mean
		se := math.Sqrt(shape / draws)
		if math.Abs(mean-shape) > 5*se {
			t.Errorf("shape %g: mean %g, want %g ± %g", shape, mean, shape, 5*se)
		}
		if math.Abs(mean-(shape+1)) <= 5*se {
			t.Errorf("shape %g: the check cannot tell shape %g from %g", shape, shape, shape+1)
		}
		if math.Abs(v-shape)/shape > 0.1 {
			t.Errorf("shape %g: variance %g, want %g", shape, v, shape)
		}
	}
	// Dirichlet(alpha) over K: each component has mean 1/K, variance
	// (K-1)/(K^2 (K alpha + 1)); a small alpha still lands on the simplex.
	const k = 4
	for _, alpha := range []float64{1e-3, 0.3, 2} {
		rng := rand.New(rand.NewPCG(2, 9))
		q := make([]float64, k)
		var s, s2 float64
		for range draws / 10 {
			Dirichlet(rng, alpha, q)
			var sum float64
			for _, v := range q {
				if !(v >= 0 && v <= 1) {
					t.Fatalf("alpha %g: component %g", alpha, v)
				}
				sum += v
			}
			if math.Abs(sum-1) > 1e-12 {
				t.Fatalf("alpha %g: components sum to %g", alpha, sum)
			}
			s += q[0]
			s2 += q[0] * q[0]
		}
		n := float64(draws / 10)
		mean, want := s/n, 1.0/k
		variance := float64(k-1) / (k * k * (k*alpha + 1))
		if se := math.Sqrt(variance / n); math.Abs(mean-want) > 5*se {
			t.Errorf("alpha %g: mean of q[0] %g, want %g ± %g", alpha, mean, want, 5*se)
		}
		if got := s2/n - mean*mean; math.Abs(got-variance)/variance > 0.1 {
			t.Errorf("alpha %g: variance of q[0] %g, want %g", alpha, got, variance)
		}
	}
}

// TestSyntheticLabel: the label alone is the example's label.
func TestSyntheticLabel(t *testing.T) {
	d := Synthetic(500, 9)
	src := SyntheticSource{N: 500, Seed: 9}
	for i := range d.N {
		if SyntheticLabel(9, i) != d.Y[i] || src.Label(i) != d.Y[i] || d.Label(i) != d.Y[i] {
			t.Fatalf("label of example %d differs", i)
		}
	}
}
