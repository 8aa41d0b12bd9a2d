package shuffler

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/route"
)

// Exact brute force of the dummy-report argument (docs/proofs/dummy-reports.md)
// on tiny instances: the exact distribution of what the server sees in a
// round (the multiset of the k reports, plus whatever a variant publishes)
// for neighbouring datasets, with per-client and per-input dropout
// probabilities, and its Rényi divergence in both directions at several
// orders against the RDP curve the ledger debits for a complete k-of-n round
// (event.RoundEvent of a sampled round of k reports of n, an eps0-LDP
// randomizer: subsampled-shuffle{n, k, eps0} under the "best" curve,
// exactly what LedgerBudget prices). The divergences are computed
// from the definition by enumerating every k-subset and every report
// multiset; they never evaluate the bound they test.
//
// The negative controls are the variants the proof says break the debit;
// each must exceed it (or be infinite) on at least one instance.

// ldp is a finite eps0-LDP randomizer: m[x][y] = Pr[R(x) = y], input 0 is
// the public dummy input x0.
type ldp struct {
	name string
	m    [][]float64
	eps0 float64
}

func rrMatrix(k int, eps0 float64) [][]float64 {
	m := make([][]float64, k)
	e := math.Exp(eps0)
	for x := range m {
		m[x] = make([]float64, k)
		for y := range m[x] {
			if x == y {
				m[x][y] = e / (e + float64(k) - 1)
			} else {
				m[x][y] = 1 / (e + float64(k) - 1)
			}
		}
	}
	return m
}

// randomLDP draws a 3x3 randomizer and returns it with its exact eps0 (the
// largest log likelihood ratio), so it is extremal for that eps0.
func randomLDP(r *rand.Rand) ldp {
	m := make([][]float64, 3)
	for x := range m {
		m[x] = make([]float64, 3)
		s := 0.0
		for y := range m[x] {
			m[x][y] = math.Exp(3 * r.Float64())
			s += m[x][y]
		}
		for y := range m[x] {
			m[x][y] /= s
		}
	}
	eps := 0.0
	for y := range 3 {
		lo, hi := math.Inf(1), 0.0
		for x := range 3 {
			lo, hi = min(lo, m[x][y]), max(hi, m[x][y])
		}
		eps = max(eps, math.Log(hi/lo))
	}
	return ldp{name: "random3", m: m, eps0: eps * (1 + 1e-12)}
}

// instance is one neighbouring pair with a dropout model.
type instance struct {
	r       ldp
	n, k    int
	data    []int // client inputs under D; D' has data[0] = x1p
	x1p     int
	dropout func(i int, data []int, sample []int) float64 // Pr[client i drops out]
	// fixed >= 0: a dummy is the fixed output fixed instead of a fresh R(x0).
	fixed int
	desc  string
}

func (in instance) String() string {
	return fmt.Sprintf("%s eps0=%.4g n=%d k=%d data=%v x1'=%d %s", in.r.name, in.r.eps0, in.n, in.k, in.data, in.x1p, in.desc)
}

// hist is a histogram over the extended alphabet: real report y is symbol
// y, a dummy report y is symbol o+y. At most 3 reports, 2*3 symbols.
type hist [6]int8

// roundDist returns the exact distribution of the extended histogram of one
// round on data: a uniform k-subset, each sampled client i reports R(x_i)
// unless it drops out (probability dropout(i, data, sample)), in which case
// a dummy takes its place.
func roundDist(in instance, data []int) map[hist]float64 {
	o := len(in.r.m[0])
	out := map[hist]float64{}
	subsets := kSubsets(in.n, in.k)
	w := 1 / float64(len(subsets))
	for _, s := range subsets {
		cur := map[hist]float64{{}: w}
		for _, i := range s {
			p := in.dropout(i, data, s)
			sym := make([]float64, 2*o)
			for y := range o {
				sym[y] = (1 - p) * in.r.m[data[i]][y]
				if in.fixed >= 0 {
					if y == in.fixed {
						sym[o+y] = p
					}
				} else {
					sym[o+y] = p * in.r.m[0][y]
				}
			}
			next := map[hist]float64{}
			for h, q := range cur {
				for a, ps := range sym {
					if ps == 0 {
						continue
					}
					h2 := h
					h2[a]++
					next[h2] += q * ps
				}
			}
			cur = next
		}
		for h, q := range cur {
			out[h] += q
		}
	}
	return out
}

func kSubsets(n, k int) [][]int {
	var out [][]int
	var rec func(start int, cur []int)
	rec = func(start int, cur []int) {
		if len(cur) == k {
			out = append(out, append([]int(nil), cur...))
			return
		}
		for i := start; i < n; i++ {
			rec(i+1, append(cur, i))
		}
	}
	rec(0, nil)
	return out
}

// view is what the server sees, as a string key.
type view func(h hist, o int) string

func merged(h hist, o int) []int8 {
	m := make([]int8, o)
	for y := range o {
		m[y] = h[y] + h[o+y]
	}
	return m
}

func dummies(h hist, o int) int {
	d := 0
	for y := range o {
		d += int(h[o+y])
	}
	return d
}

var views = map[string]view{
	// The shuffler's default: the k reports, dummies indistinguishable.
	"sound": func(h hist, o int) string { return fmt.Sprint(merged(h, o)) },
	// The reports and the number of dummies.
	"dummy-count": func(h hist, o int) string { return fmt.Sprint(merged(h, o), dummies(h, o)) },
	// The reports and whether the batch was released early (no dummy).
	"early-release": func(h hist, o int) string { return fmt.Sprint(merged(h, o), dummies(h, o) == 0) },
	// Dummies marked as such.
	"distinguishable": func(h hist, o int) string { return fmt.Sprint(h[:2*o]) },
	// The former default: a round with a missing report is discarded.
	"discard": func(h hist, o int) string {
		if dummies(h, o) > 0 {
			return "discarded"
		}
		return fmt.Sprint(merged(h, o))
	},
}

func project(d map[hist]float64, v view, o int) map[string]float64 {
	out := map[string]float64{}
	for h, q := range d {
		out[v(h, o)] += q
	}
	return out
}

// renyi returns D_alpha(P||Q) (+Inf when P is not absolutely continuous
// with respect to Q).
func renyi(p, q map[string]float64, alpha float64) float64 {
	s := 0.0
	for key, pv := range p {
		if pv <= 0 {
			continue
		}
		qv := q[key]
		if qv <= 0 {
			return math.Inf(1)
		}
		s += math.Exp(alpha*math.Log(pv) + (1-alpha)*math.Log(qv))
	}
	return math.Log(s) / (alpha - 1)
}

var bruteOrders = []float64{1.5, 2, 3, 4, 8, 16, 32}

// debited caches the ledger's per-round curve of a complete round.
type debited map[[2]int]map[float64]map[float64]float64

func (c debited) at(t *testing.T, n, k int, eps0, order float64) float64 {
	t.Helper()
	key := [2]int{n, k}
	if c[key] == nil {
		c[key] = map[float64]map[float64]float64{}
	}
	if c[key][eps0] == nil {
		e, err := event.RoundEvent(event.Round{Randomizer: "rinf", Participation: event.ParticipationSample,
			N: int64(n), Reports: int64(k), Eps0: eps0})
		if err != nil {
			t.Fatal(err)
		}
		if e.Mechanism != event.SubsampledShuffle || e.N != int64(n) || e.K != int64(k) {
			t.Fatalf("a round of %d of %d is debited as %v", k, n, e)
		}
		curve, err := route.Curve(e, "")
		if err != nil {
			t.Fatal(err)
		}
		m := map[float64]float64{}
		for _, a := range bruteOrders {
			if m[a], err = curve.RDP(a); err != nil {
				t.Fatalf("n=%d k=%d eps0=%g order %g: %v", n, k, eps0, a, err)
			}
		}
		c[key][eps0] = m
	}
	return c[key][eps0][order]
}

// excess returns the largest ratio divergence/debited over orders and both
// directions of the pair's views (+Inf for an infinite divergence), and the
// order where it occurs.
func excess(t *testing.T, c debited, in instance, v view, rounds int) (float64, float64) {
	t.Helper()
	o := len(in.r.m[0])
	d2 := append([]int(nil), in.data...)
	d2[0] = in.x1p
	p := project(roundDist(in, in.data), v, o)
	q := project(roundDist(in, d2), v, o)
	if rounds > 1 {
		p, q = power(p, rounds), power(q, rounds)
	}
	worst, at := 0.0, 0.0
	for _, a := range bruteOrders {
		b := float64(rounds) * c.at(t, in.n, in.k, in.r.eps0, a)
		for _, dv := range []float64{renyi(p, q, a), renyi(q, p, a)} {
			r := dv / b
			if b == 0 {
				r = 0
				if dv > 1e-12 {
					r = math.Inf(1)
				}
			}
			if r > worst {
				worst, at = r, a
			}
		}
	}
	return worst, at
}

// power is the view of independent rounds (the product distribution).
func power(p map[string]float64, rounds int) map[string]float64 {
	out := map[string]float64{"": 1}
	for range rounds {
		next := map[string]float64{}
		for a, pa := range out {
			for b, pb := range p {
				next[a+"|"+b] += pa * pb
			}
		}
		out = next
	}
	return out
}

// bruteRandomizers are the randomizers of the sweep: binary RR and 3-ary RR
// at several eps0, and random extremal 3x3 randomizers.
func bruteRandomizers(r *rand.Rand, random int) []ldp {
	var out []ldp
	for _, e := range []float64{0.5, 1, 2, 4} {
		out = append(out, ldp{name: "rr2", m: rrMatrix(2, e), eps0: e})
	}
	for _, e := range []float64{1, 3} {
		out = append(out, ldp{name: "rr3", m: rrMatrix(3, e), eps0: e})
	}
	for range random {
		out = append(out, randomLDP(r))
	}
	return out
}

// ownDropout returns a dropout model that depends only on the client's own
// identity and input: table[i][x].
func ownDropout(table [][]float64) func(int, []int, []int) float64 {
	return func(i int, data []int, _ []int) float64 { return table[i][data[i]] }
}

func dropoutTable(r *rand.Rand, n, inputs int) [][]float64 {
	t := make([][]float64, n)
	for i := range t {
		t[i] = make([]float64, inputs)
		for x := range t[i] {
			switch r.IntN(4) {
			case 0:
				t[i][x] = 0
			case 1:
				t[i][x] = 1
			default:
				t[i][x] = r.Float64()
			}
		}
	}
	return t
}

// soundInstances enumerates the sweep: every n <= nMax, k <= min(3, n),
// randomizer, assignment of inputs to clients 2..n (up to a cap), pair of
// inputs of client 1, and several dropout tables (all-zero, all-one,
// client 1 dropping exactly on one of its inputs, random ones with 0 and 1).
func soundInstances(r *rand.Rand, nMax, tables, random int, yield func(instance)) {
	for _, rz := range bruteRandomizers(r, random) {
		inputs := len(rz.m)
		for n := 1; n <= nMax; n++ {
			for k := 1; k <= min(3, n); k++ {
				for _, data := range assignments(r, n, inputs, 12) {
					for x1p := range inputs {
						if x1p == data[0] {
							continue
						}
						var ts [][][]float64
						ts = append(ts, constTable(n, inputs, 0), constTable(n, inputs, 1))
						t1 := constTable(n, inputs, 0)
						t1[0][data[0]] = 1 // client 1 drops out exactly when it holds x1
						ts = append(ts, t1)
						for range tables {
							ts = append(ts, dropoutTable(r, n, inputs))
						}
						for _, tb := range ts {
							yield(instance{r: rz, n: n, k: k, data: data, x1p: x1p, dropout: ownDropout(tb), fixed: -1,
								desc: fmt.Sprintf("dropout %v", tb)})
						}
					}
				}
			}
		}
	}
}

func constTable(n, inputs int, v float64) [][]float64 {
	t := make([][]float64, n)
	for i := range t {
		t[i] = make([]float64, inputs)
		for x := range t[i] {
			t[i][x] = v
		}
	}
	return t
}

// assignments returns up to limit assignments of inputs to n clients
// (all of them when there are at most limit).
func assignments(r *rand.Rand, n, inputs, limit int) [][]int {
	total := 1
	for range n {
		total *= inputs
	}
	var out [][]int
	if total <= limit {
		for c := range total {
			a := make([]int, n)
			for i, v := 0, c; i < n; i, v = i+1, v/inputs {
				a[i] = v % inputs
			}
			out = append(out, a)
		}
		return out
	}
	for range limit {
		a := make([]int, n)
		for i := range a {
			a[i] = r.IntN(inputs)
		}
		out = append(out, a)
	}
	return out
}

// bruteTol admits float64 rounding of the exact sums (a few hundred terms):
// a divergence above debited*(1+bruteTol) is a violation.
const bruteTol = 1e-9

// TestDummyReportsBruteForce: under (A1)-(A3) every instance stays within
// the debited bound of a complete round, in one round and (with the
// dropout model fixed for the run, i.e. correlated across rounds) in two.
func TestDummyReportsBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	c := debited{}
	count, worst := 0, 0.0
	var worstIn instance
	soundInstances(r, 4, 3, 3, func(in instance) {
		count++
		x, a := excess(t, c, in, views["sound"], 1)
		if x > worst {
			worst, worstIn = x, in
		}
		if x > 1+bruteTol {
			t.Fatalf("%v: divergence %.6g x the debited bound at order %g", in, x, a)
		}
	})
	t.Logf("one round: %d instances x %d orders x 2 directions, largest divergence/debited %.6f (%v)", count, len(bruteOrders), worst, worstIn)
	if count < 5000 {
		t.Fatalf("only %d instances", count)
	}

	// Two rounds, each client's dropout decided once for the run (a device
	// that is offline stays offline): the view is the mixture over the
	// dropout states of the product of the rounds, which the proof covers
	// by conditioning on the dropout randomness.
	two, worst2 := 0, 0.0
	for _, rz := range bruteRandomizers(r, 0)[:4] {
		for n := 2; n <= 3; n++ {
			for k := 1; k <= n; k++ {
				for _, data := range assignments(r, n, 2, 8) {
					tb := dropoutTable(r, n, 2)
					x := persistentExcess(t, c, rz, n, k, data, tb, 2)
					two++
					worst2 = max(worst2, x)
					if x > 1+bruteTol {
						t.Fatalf("%s n=%d k=%d data=%v dropout %v: two rounds %.6g x the debited bound", rz.name, n, k, data, tb, x)
					}
				}
			}
		}
	}
	t.Logf("two rounds, persistent dropout: %d instances, largest divergence/debited %.6f", two, worst2)
}

// TestDummyReportsBruteForceLarge is the larger sweep (n <= 5, more dropout
// tables and random randomizers), run on demand:
//
//	SHUFFLEDP_DUMMY_SWEEP=1 go test ./shuffler -run DummyReportsBruteForceLarge -v
//
// Its result is recorded in docs/proofs/dummy-reports.md.
func TestDummyReportsBruteForceLarge(t *testing.T) {
	if os.Getenv("SHUFFLEDP_DUMMY_SWEEP") == "" {
		t.Skip("set SHUFFLEDP_DUMMY_SWEEP=1 for the larger sweep")
	}
	r := rand.New(rand.NewPCG(5, 6))
	c := debited{}
	count, worst := 0, 0.0
	soundInstances(r, 5, 12, 12, func(in instance) {
		count++
		x, a := excess(t, c, in, views["sound"], 1)
		worst = max(worst, x)
		if x > 1+bruteTol {
			t.Fatalf("%v: divergence %.6g x the debited bound at order %g", in, x, a)
		}
	})
	t.Logf("%d instances x %d orders x 2 directions, largest divergence/debited %.9f", count, len(bruteOrders), worst)
}

// TestDummyReportsFormerPolicies pins the two figures of the former
// policies: the discard probability under neighbouring datasets (n = 4,
// k = 3, client 1 dropping out exactly when it holds 1: 0.75 vs 0), which
// the server sees and the ledger never debited.
func TestDummyReportsFormerPolicies(t *testing.T) {
	in := instance{r: ldp{name: "rr2", m: rrMatrix(2, 1), eps0: 1}, n: 4, k: 3, data: []int{1, 0, 0, 0}, x1p: 0, fixed: -1,
		dropout: func(i int, d []int, _ []int) float64 {
			if i == 0 && d[0] == 1 {
				return 1
			}
			return 0
		}}
	p := project(roundDist(in, in.data), views["discard"], 2)["discarded"]
	q := project(roundDist(in, []int{0, 0, 0, 0}), views["discard"], 2)["discarded"]
	if math.Abs(p-0.75) > 1e-15 || q != 0 {
		t.Fatalf("discard probability %g vs %g, want 0.75 vs 0", p, q)
	}
}

// persistentExcess is excess for rounds rounds in which client i is offline
// for the whole run with probability tb[i][x_i] (an independent coin per
// client), x1 = data[0] vs 1 - data[0] (binary inputs).
func persistentExcess(t *testing.T, c debited, rz ldp, n, k int, data []int, tb [][]float64, rounds int) float64 {
	t.Helper()
	o := len(rz.m[0])
	mix := func(d []int) map[string]float64 {
		out := map[string]float64{}
		for state := range 1 << n {
			w := 1.0
			for i := range n {
				p := tb[i][d[i]]
				if state>>i&1 == 1 {
					w *= p
				} else {
					w *= 1 - p
				}
			}
			if w == 0 {
				continue
			}
			in := instance{r: rz, n: n, k: k, fixed: -1, dropout: func(i int, _ []int, _ []int) float64 {
				return float64(state >> i & 1)
			}}
			for key, q := range power(project(roundDist(in, d), views["sound"], o), rounds) {
				out[key] += w * q
			}
		}
		return out
	}
	d2 := append([]int(nil), data...)
	d2[0] = 1 - data[0]
	p, q := mix(data), mix(d2)
	worst := 0.0
	for _, a := range bruteOrders {
		b := float64(rounds) * c.at(t, n, k, rz.eps0, a)
		worst = max(worst, renyi(p, q, a)/b, renyi(q, p, a)/b)
	}
	return worst
}

// TestDummyReportsIIDCount: under (A2') — dropout independent of the data
// and exchangeable across clients — even the dummy count (and so the early
// release of --release-when-complete) stays within the debited bound.
func TestDummyReportsIIDCount(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	c := debited{}
	count := 0
	for _, rz := range bruteRandomizers(r, 2) {
		inputs := len(rz.m)
		for n := 1; n <= 4; n++ {
			for k := 1; k <= min(3, n); k++ {
				for _, data := range assignments(r, n, inputs, 6) {
					for _, p := range []float64{0, 0.1, 0.5, 0.9, 1} {
						in := instance{r: rz, n: n, k: k, data: data, x1p: (data[0] + 1) % inputs, fixed: -1,
							dropout: func(int, []int, []int) float64 { return p }, desc: fmt.Sprintf("iid dropout %g", p)}
						for _, v := range []string{"dummy-count", "early-release"} {
							count++
							if x, a := excess(t, c, in, views[v], 1); x > 1+bruteTol {
								t.Fatalf("%s: %v: %.6g x the debited bound at order %g", v, in, x, a)
							}
						}
					}
				}
			}
		}
	}
	t.Logf("iid dropout with the count published: %d instances within the bound", count)
}

// control is a negative control: a variant the proof says is unsound, with
// instances on which the brute force must find it exceeding the debit.
type control struct {
	name string
	run  func(t *testing.T, c debited) (float64, string)
}

// TestDummyReportsNegativeControls: each broken variant exceeds the
// debited bound (or has an infinite divergence) on some tiny instance.
func TestDummyReportsNegativeControls(t *testing.T) {
	c := debited{}
	rr := func(e float64) ldp { return ldp{name: "rr2", m: rrMatrix(2, e), eps0: e} }
	// own: client 1 drops out exactly when it holds 1 (allowed by A2: its
	// own data); the others never.
	own := func(i int, data []int, _ []int) float64 {
		if i == 0 && data[0] == 1 {
			return 1
		}
		return 0
	}
	search := func(t *testing.T, v string, mk func(rz ldp, n, k int, data []int) instance) (float64, string) {
		worst, at := 0.0, ""
		for _, e := range []float64{0.5, 1, 2, 4} {
			for n := 2; n <= 4; n++ {
				for k := 1; k <= min(3, n); k++ {
					for _, data := range assignments(nil, n, 2, 16) {
						if data[0] != 1 {
							continue
						}
						in := mk(rr(e), n, k, data)
						x, a := excess(t, c, in, views[v], 1)
						if x > worst {
							worst, at = x, fmt.Sprintf("%v, order %g", in, a)
						}
					}
				}
			}
		}
		return worst, at
	}
	controls := []control{
		{"dummy-count", func(t *testing.T, c debited) (float64, string) {
			return search(t, "dummy-count", func(rz ldp, n, k int, data []int) instance {
				return instance{r: rz, n: n, k: k, data: data, x1p: 0, dropout: own, fixed: -1, desc: "client 1 drops out iff x1 = 1"}
			})
		}},
		{"early-release", func(t *testing.T, c debited) (float64, string) {
			return search(t, "early-release", func(rz ldp, n, k int, data []int) instance {
				return instance{r: rz, n: n, k: k, data: data, x1p: 0, dropout: own, fixed: -1, desc: "client 1 drops out iff x1 = 1"}
			})
		}},
		{"distinguishable", func(t *testing.T, c debited) (float64, string) {
			return search(t, "distinguishable", func(rz ldp, n, k int, data []int) instance {
				return instance{r: rz, n: n, k: k, data: data, x1p: 0, dropout: own, fixed: -1, desc: "client 1 drops out iff x1 = 1"}
			})
		}},
		{"discard", func(t *testing.T, c debited) (float64, string) {
			return search(t, "discard", func(rz ldp, n, k int, data []int) instance {
				return instance{r: rz, n: n, k: k, data: data, x1p: 0, dropout: own, fixed: -1, desc: "client 1 drops out iff x1 = 1"}
			})
		}},
		{"fixed-dummy", func(t *testing.T, c debited) (float64, string) {
			return search(t, "sound", func(rz ldp, n, k int, data []int) instance {
				return instance{r: rz, n: n, k: k, data: data, x1p: 0, dropout: own, fixed: 0, desc: "client 1 drops out iff x1 = 1; dummy = fixed report 0"}
			})
		}},
		{"cross-dependent", func(t *testing.T, c debited) (float64, string) {
			// Client 2 drops out exactly when client 1 holds 0 (its data is
			// x0's, so client 2's report follows client 1's input).
			return search(t, "sound", func(rz ldp, n, k int, data []int) instance {
				return instance{r: rz, n: n, k: k, data: data, x1p: 0, fixed: -1, desc: "client 2 drops out iff x1 = 0",
					dropout: func(i int, d []int, _ []int) float64 {
						if i == 1 && d[0] == 0 {
							return 1
						}
						return 0
					}}
			})
		}},
		{"sample-dependent", func(t *testing.T, c debited) (float64, string) {
			// Every other client drops out exactly when client 1 is sampled.
			return search(t, "sound", func(rz ldp, n, k int, data []int) instance {
				return instance{r: rz, n: n, k: k, data: data, x1p: 0, fixed: -1, desc: "the others drop out iff client 1 is sampled",
					dropout: func(i int, _ []int, s []int) float64 {
						if i != 0 && s[0] == 0 {
							return 1
						}
						return 0
					}}
			})
		}},
		{"release-partial", func(t *testing.T, c debited) (float64, string) {
			return releasePartial(t, c)
		}},
		{"random-min-batch", func(t *testing.T, c debited) (float64, string) {
			return randomMinBatch(t, c, own)
		}},
	}
	for _, ctl := range controls {
		t.Run(ctl.name, func(t *testing.T) {
			x, at := ctl.run(t, c)
			if !(x > 1+1e-6) {
				t.Fatalf("the broken variant stayed within the debited bound (largest ratio %.6g at %s)", x, at)
			}
			t.Logf("exceeds the debit: divergence/debited = %.4g at %s", x, at)
		})
	}
}

// releasePartial is the former ReleasePartial: the k' delivered reports are
// released (k' >= 1; k' = 0 is discarded) and debited as a round of k' of
// n. Its dropout is independent of the data, with per-client rates. A
// data-dependent debit is sound only if, given the realized k', the batch is
// within the k'-of-n bound and k' has the same distribution under both
// datasets; the check measures both.
func releasePartial(t *testing.T, c debited) (float64, string) {
	worst, at := 0.0, ""
	for _, e := range []float64{0.5, 1, 2, 4} {
		rz := ldp{name: "rr2", m: rrMatrix(2, e), eps0: e}
		for n := 2; n <= 4; n++ {
			for k := 1; k <= min(3, n); k++ {
				for _, data := range assignments(nil, n, 2, 16) {
					// Client 1 always delivers, the others never.
					in := instance{r: rz, n: n, k: k, data: data, x1p: 1 - data[0], fixed: -1,
						dropout: func(i int, _ []int, _ []int) float64 { return float64(min(i, 1)) }}
					o := 2
					real := func(h hist, o int) string { return fmt.Sprint(h[:o]) }
					d2 := append([]int(nil), data...)
					d2[0] = in.x1p
					p := project(roundDist(in, data), real, o)
					q := project(roundDist(in, d2), real, o)
					byK := func(m map[string]float64) map[int]map[string]float64 {
						out := map[int]map[string]float64{}
						for key, v := range m {
							kp := 0
							for _, f := range strings.Fields(strings.Trim(key, "[]")) {
								var x int
								fmt.Sscan(f, &x)
								kp += x
							}
							if out[kp] == nil {
								out[kp] = map[string]float64{}
							}
							out[kp][key] = v
						}
						return out
					}
					pk, qk := byK(p), byK(q)
					for kp, pm := range pk {
						if kp == 0 {
							continue // discarded: the same probability under both
						}
						sp, sq := sum(pm), sum(qk[kp])
						if math.Abs(sp-sq) > 1e-12 {
							return math.Inf(1), fmt.Sprintf("%v: Pr[k'=%d] %g vs %g", in, kp, sp, sq)
						}
						for key := range pm {
							pm[key] /= sp
						}
						qm := qk[kp]
						for key := range qm {
							qm[key] /= sq
						}
						for _, a := range bruteOrders {
							b := c.at(t, n, kp, e, a)
							for _, dv := range []float64{renyi(pm, qm, a), renyi(qm, pm, a)} {
								if dv/b > worst {
									worst = dv / b
									at = fmt.Sprintf("rr2 eps0=%g n=%d k=%d k'=%d data=%v (client 1 always delivers, the others never), order %g: %.4g vs %.4g debited",
										e, n, k, kp, data, a, dv, b)
								}
							}
						}
					}
				}
			}
		}
	}
	return worst, at
}

func sum(m map[string]float64) float64 {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	s := 0.0
	for _, k := range keys {
		s += m[k]
	}
	return s
}

// TestDummyReportsOracle checks the brute-force engine (roundDist, the
// view, renyi) against an independent mpmath implementation,
// testdata/dummy_oracle.py (50 digits): per-client and per-input dropout
// probabilities, a dropout that depends on another client's data, and no
// dropout; orders 1.5, 2 and 8, both directions; within 1e-12 relative.
func TestDummyReportsOracle(t *testing.T) {
	b, err := os.ReadFile("testdata/dummy_oracle.json")
	if err != nil {
		t.Fatal(err)
	}
	var rows []struct {
		Name             string
		Eps0             float64
		N, K             int
		Data             []int
		X1p              int
		Order            float64
		Forward, Reverse string
	}
	if err := json.Unmarshal(b, &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 9 {
		t.Fatalf("%d oracle rows, want 9", len(rows))
	}
	drops := map[string]func(int, []int, []int) float64{
		"own-table": ownDropout([][]float64{{0.25, 0.5}, {0, 0.5}, {1, 0.75}}),
		"cross-dependent": func(i int, d []int, _ []int) float64 {
			if i == 1 && d[0] == 0 {
				return 1
			}
			return 0
		},
		"none": func(int, []int, []int) float64 { return 0 },
	}
	for _, r := range rows {
		in := instance{r: ldp{name: "rr2", m: rrMatrix(2, r.Eps0), eps0: r.Eps0}, n: r.N, k: r.K, data: r.Data, x1p: r.X1p,
			dropout: drops[r.Name], fixed: -1}
		d2 := append([]int(nil), r.Data...)
		d2[0] = r.X1p
		p := project(roundDist(in, r.Data), views["sound"], 2)
		q := project(roundDist(in, d2), views["sound"], 2)
		for _, c := range []struct {
			got  float64
			want string
		}{{renyi(p, q, r.Order), r.Forward}, {renyi(q, p, r.Order), r.Reverse}} {
			want, err := strconv.ParseFloat(c.want, 64)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(c.got-want) > 1e-12*math.Abs(want) {
				t.Fatalf("%s order %g: %.17g, oracle %s", r.Name, r.Order, c.got, c.want)
			}
		}
	}
}

// randomMinBatch is a randomized minimum batch applied to the real reports
// under dummies: each round a threshold M is drawn, independently of
// everything, uniformly from {lo, ..., k} (every lo in 1..k is tried), and
// the round is discarded (the server sees "discarded") when fewer than M of
// the k reports are real, otherwise released as the k reports with dummies.
// The discard is a randomized function of the dummy count, which (A3)
// forbids the server to observe: with client 1 dropping out when it holds 1
// (allowed by A2), a discard is possible under D and impossible under D',
// so the divergence is infinite.
func randomMinBatch(t *testing.T, c debited, dropout func(int, []int, []int) float64) (float64, string) {
	worst, at := 0.0, ""
	for _, e := range []float64{0.5, 1, 2, 4} {
		rz := ldp{name: "rr2", m: rrMatrix(2, e), eps0: e}
		for n := 2; n <= 4; n++ {
			for k := 1; k <= min(3, n); k++ {
				for lo := 1; lo <= k; lo++ {
					for _, data := range assignments(nil, n, 2, 16) {
						if data[0] != 1 {
							continue
						}
						in := instance{r: rz, n: n, k: k, data: data, x1p: 0, dropout: dropout, fixed: -1,
							desc: fmt.Sprintf("client 1 drops out iff x1 = 1; threshold uniform on {%d..%d}", lo, k)}
						o := len(rz.m[0])
						view := func(d map[hist]float64) map[string]float64 {
							out := map[string]float64{}
							for h, q := range d {
								real := k - dummies(h, o)
								pd := 0.0 // Pr[M > real]
								for m := lo; m <= k; m++ {
									if m > real {
										pd += 1 / float64(k-lo+1)
									}
								}
								if pd > 0 {
									out["discarded"] += q * pd
								}
								if pd < 1 {
									out[fmt.Sprint(merged(h, o))] += q * (1 - pd)
								}
							}
							return out
						}
						d2 := append([]int(nil), data...)
						d2[0] = in.x1p
						p, q := view(roundDist(in, data)), view(roundDist(in, d2))
						for _, a := range bruteOrders {
							b := c.at(t, n, k, e, a)
							for _, dv := range []float64{renyi(p, q, a), renyi(q, p, a)} {
								if dv/b > worst {
									worst, at = dv/b, fmt.Sprintf("%v, order %g", in, a)
								}
							}
						}
					}
				}
			}
		}
	}
	return worst, at
}
