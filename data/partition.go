package data

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// Partition kinds (train --partition): how the population's examples are
// dealt to the clients, each client holding M of them (--examples-per-client).
const (
	// PartitionIndex: client i holds examples i*M .. i*M+M-1 of the
	// training set, in order (the default: at M = 1, client i holds
	// example i, the rule of every run before clients held several
	// examples, bit for bit).
	PartitionIndex = "index"
	// PartitionIID: a seeded permutation of the population cut into
	// clients of M examples.
	PartitionIID = "iid"
	// PartitionDirichlet (dirichlet:ALPHA): label skew. Every client draws
	// its class proportions q from the symmetric Dirichlet(ALPHA) over the
	// classes and then its M examples, one at a time, from the classes in
	// proportion to q (renormalised over the classes whose examples are
	// not all dealt yet), uniformly within a class (Hsu, Qi and Brown,
	// "Measuring the effects of non-identical data distribution for
	// federated visual classification", 2019, Sec. 3, with sizes fixed at
	// M). Small ALPHA: few classes per client; large: close to iid.
	PartitionDirichlet = "dirichlet"
	// PartitionShards (shards:S): McMahan et al., "Communication-efficient
	// learning of deep networks from decentralized data" (AISTATS 2017),
	// Sec. 3's pathological non-IID split: the population sorted by label
	// is cut into clients*S shards of M/S examples, and every client gets
	// S shards drawn without replacement, so it sees at most S labels but
	// where a shard straddles two (at most 2S).
	PartitionShards = "shards"
)

// partitionStream is the PCG stream of the partition's generator (seeded
// with the run's seed): distinct from the other streams of a seed.
const partitionStream = 0x9a27_1710

// Partition is a parsed --partition value.
type Partition struct {
	// Kind is one of PartitionIndex (the zero value ""), PartitionIID,
	// PartitionDirichlet, PartitionShards.
	Kind string
	// Alpha is the Dirichlet concentration of PartitionDirichlet (> 0).
	Alpha float64
	// Shards is S of PartitionShards (>= 1).
	Shards int
}

// ParsePartition parses index, iid, dirichlet:ALPHA (ALPHA > 0, finite) or
// shards:S (S >= 1); "" is index. Errors name the flag (partition).
func ParsePartition(s string) (Partition, error) {
	kind, arg, hasArg := strings.Cut(strings.TrimSpace(s), ":")
	switch kind {
	case "", PartitionIndex, PartitionIID:
		if hasArg {
			return Partition{}, fmt.Errorf("partition %s takes no parameter, got %q", kind, s)
		}
		if kind == PartitionIID {
			return Partition{Kind: PartitionIID}, nil
		}
		return Partition{}, nil
	case PartitionDirichlet:
		a, err := strconv.ParseFloat(arg, 64)
		if !hasArg || err != nil || !(a > 0) || math.IsInf(a, 0) {
			return Partition{}, fmt.Errorf("partition dirichlet:ALPHA needs ALPHA > 0 and finite (e.g. dirichlet:0.5), got %q", s)
		}
		return Partition{Kind: PartitionDirichlet, Alpha: a}, nil
	case PartitionShards:
		n, err := strconv.Atoi(arg)
		if !hasArg || err != nil || n < 1 {
			return Partition{}, fmt.Errorf("partition shards:S needs an integer S >= 1 (e.g. shards:2), got %q", s)
		}
		return Partition{Kind: PartitionShards, Shards: n}, nil
	}
	return Partition{}, fmt.Errorf("partition must be index, iid, dirichlet:ALPHA or shards:S, got %q", s)
}

// String is the flag value of p (ParsePartition's inverse).
func (p Partition) String() string {
	switch p.Kind {
	case PartitionIID:
		return PartitionIID
	case PartitionDirichlet:
		return PartitionDirichlet + ":" + strconv.FormatFloat(p.Alpha, 'g', -1, 64)
	case PartitionShards:
		return PartitionShards + ":" + strconv.Itoa(p.Shards)
	}
	return PartitionIndex
}

// NeedsLabels reports whether the partition reads the population's
// labels (dirichlet and shards do; index and iid do not).
func (p Partition) NeedsLabels() bool {
	return p.Kind == PartitionDirichlet || p.Kind == PartitionShards
}

// MaxPopulation bounds clients * examples-per-client (the indices are
// int32-sized on the wire).
const MaxPopulation = math.MaxInt32

// Check refuses clients and perClient that p cannot deal: clients >= 1,
// perClient >= 1, their product (the population) at most MaxPopulation,
// and for shards:S, S dividing perClient. Errors name the flags.
func (p Partition) Check(clients, perClient int) error {
	switch {
	case clients < 1:
		return fmt.Errorf("clients must be >= 1, got %d", clients)
	case perClient < 1:
		return fmt.Errorf("examples-per-client must be >= 1, got %d", perClient)
	case int64(clients)*int64(perClient) > MaxPopulation:
		return fmt.Errorf("clients * examples-per-client = %d * %d exceeds %d examples", clients, perClient, MaxPopulation)
	case p.Kind == PartitionShards && perClient%p.Shards != 0:
		return fmt.Errorf("partition shards:%d needs examples-per-client divisible by %d (shards of M/S examples), got %d", p.Shards, p.Shards, perClient)
	}
	return nil
}

// Assignment says which examples each client holds: client c holds
// PerClient examples of the population 0 .. Clients*PerClient-1, disjoint
// from every other client's.
type Assignment struct {
	Clients, PerClient int
	// idx holds client c's examples at idx[c*PerClient:(c+1)*PerClient];
	// nil for PartitionIndex (client c holds c*PerClient + j).
	idx []int
}

// IndexAssignment is PartitionIndex's assignment: client c holds examples
// c*perClient .. c*perClient+perClient-1.
func IndexAssignment(clients, perClient int) Assignment {
	return Assignment{Clients: clients, PerClient: perClient}
}

// Examples appends client c's example indices to dst and returns it.
func (a Assignment) Examples(c int, dst []int) []int {
	if a.idx != nil {
		return append(dst, a.idx[c*a.PerClient:(c+1)*a.PerClient]...)
	}
	for j := range a.PerClient {
		dst = append(dst, c*a.PerClient+j)
	}
	return dst
}

// Assign deals the population 0 .. clients*perClient-1 to clients clients
// of perClient examples each by p, from a generator seeded with seed (a
// simulation generator: the partition is public and reproducible). classes
// is the number of labels and label(i) example i's label, read only by
// the partitions that need labels (NeedsLabels; label may be nil for the
// others). It runs in O(population * classes) time for dirichlet and
// O(population log population) for shards.
func (p Partition) Assign(clients, perClient, classes int, label func(i int) int, seed uint64) (Assignment, error) {
	if err := p.Check(clients, perClient); err != nil {
		return Assignment{}, err
	}
	a := Assignment{Clients: clients, PerClient: perClient}
	n := clients * perClient
	rng := rand.New(rand.NewPCG(seed, partitionStream))
	var labels []int
	if p.NeedsLabels() {
		if label == nil || classes < 1 {
			return Assignment{}, errors.New("partition: labels are required for " + p.String())
		}
		labels = make([]int, n)
		for i := range labels {
			if labels[i] = label(i); labels[i] < 0 || labels[i] >= classes {
				return Assignment{}, fmt.Errorf("partition: label %d of example %d outside [0, %d)", labels[i], i, classes)
			}
		}
	}
	switch p.Kind {
	case "", PartitionIndex:
		return a, nil
	case PartitionIID:
		a.idx = rng.Perm(n)
	case PartitionShards:
		a.idx = assignShards(labels, clients, p.Shards, perClient/p.Shards, rng)
	case PartitionDirichlet:
		a.idx = assignDirichlet(labels, classes, clients, perClient, p.Alpha, rng)
	default:
		return Assignment{}, fmt.Errorf("partition: unknown kind %q", p.Kind)
	}
	return a, nil
}

// assignShards sorts the examples by label (stably: ties in index order),
// cuts them into clients*s shards of size each and gives client c the
// shards perm[c*s .. c*s+s-1] of a uniform permutation.
func assignShards(labels []int, clients, s, size int, rng *rand.Rand) []int {
	sorted := make([]int, len(labels))
	for i := range sorted {
		sorted[i] = i
	}
	slices.SortStableFunc(sorted, func(x, y int) int { return labels[x] - labels[y] })
	perm := rng.Perm(clients * s)
	out := make([]int, 0, len(labels))
	for _, sh := range perm {
		out = append(out, sorted[sh*size:(sh+1)*size]...)
	}
	return out
}

// assignDirichlet deals the examples by label skew (PartitionDirichlet):
// each class's examples in a uniformly random order; client after client
// draws q ~ Dirichlet(alpha, ..., alpha) and then each of its perClient
// examples from a class drawn with probability proportional to q over the
// classes with examples left (every class left has one, since the
// examples left are exactly the demand left).
func assignDirichlet(labels []int, classes, clients, perClient int, alpha float64, rng *rand.Rand) []int {
	pools := make([][]int, classes)
	for i, y := range labels {
		pools[y] = append(pools[y], i)
	}
	for _, p := range pools {
		rng.Shuffle(len(p), func(i, j int) { p[i], p[j] = p[j], p[i] })
	}
	out := make([]int, 0, len(labels))
	q := make([]float64, classes)
	for range clients {
		Dirichlet(rng, alpha, q)
		for range perClient {
			var total float64
			for y, p := range pools {
				if len(p) > 0 {
					total += q[y]
				}
			}
			y := pickClass(rng, q, pools, total)
			last := len(pools[y]) - 1
			out = append(out, pools[y][last])
			pools[y] = pools[y][:last]
		}
	}
	return out
}

// pickClass draws a class with probability q[y]/total among those with
// examples left; where total is 0 (q concentrated on exhausted classes,
// or underflow), uniformly among them.
func pickClass(rng *rand.Rand, q []float64, pools [][]int, total float64) int {
	if total > 0 {
		u := rng.Float64() * total
		last := -1
		for y, p := range pools {
			if len(p) == 0 {
				continue
			}
			last = y
			if u < q[y] {
				return y
			}
			u -= q[y]
		}
		if last >= 0 && q[last] > 0 { // u rounded past the last class
			return last
		}
	}
	left := 0
	for _, p := range pools {
		if len(p) > 0 {
			left++
		}
	}
	k := rng.IntN(left)
	for y, p := range pools {
		if len(p) > 0 {
			if k == 0 {
				return y
			}
			k--
		}
	}
	panic("data: no class left to deal")
}

// Dirichlet writes a draw of the symmetric Dirichlet(alpha, ..., alpha)
// distribution over len(q) components into q: independent Gamma(alpha, 1)
// variates normalised to sum 1, computed from their logarithms (LogGamma)
// so that a small alpha, whose variates underflow, still gives a point of
// the simplex.
func Dirichlet(rng *rand.Rand, alpha float64, q []float64) {
	hi := math.Inf(-1)
	for i := range q {
		q[i] = LogGamma(rng, alpha)
		hi = max(hi, q[i])
	}
	var s float64
	for i := range q {
		q[i] = math.Exp(q[i] - hi)
		s += q[i]
	}
	for i := range q {
		q[i] /= s
	}
}

// LogGamma returns the logarithm of a Gamma(shape, 1) variate (shape > 0):
// Marsaglia and Tsang, "A simple method for generating gamma variables"
// (ACM TOMS 26(3), 2000), for shape >= 1, and for shape < 1 their boost
// Gamma(shape) = Gamma(shape+1) * U^(1/shape), added in log space.
func LogGamma(rng *rand.Rand, shape float64) float64 {
	if shape < 1 {
		u := 1 - rng.Float64() // (0, 1]
		return LogGamma(rng, shape+1) + math.Log(u)/shape
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := 1 - rng.Float64()
		if math.Log(u) < 0.5*x*x+d-d*v+d*math.Log(v) {
			return math.Log(d) + math.Log(v)
		}
	}
}
