package shard

import (
	"fmt"
	"math"
	"strconv"
	"testing"

	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/route"
)

// Exact brute force of the sharded run's privacy argument
// (docs/proofs/shards.md) on tiny instances: n clients split into shards by
// Split; each shard samples k_s of its n_s clients without replacement,
// each sampled client applies binary randomized response to its bit, and
// the shard's batch is the multiset of its k_s reports (the count of ones:
// a uniformly permuted binary batch carries nothing else). The server's
// view of a round is the tuple of the shards' batches; of several rounds,
// the tuple of the rounds' views (independent sampling and noise). For two
// neighbouring datasets (one client's bit replaced) the Rényi divergence of
// the views, in both directions, is computed from the definition by
// enumerating every sample and every output, and compared with what the
// ledger debits for that client: rounds x the RDP curve of its own shard's
// subsampled-shuffle{n_s, k_s, eps0} (event.RoundEvent, the function the
// shuffler's ledger prices a round with). The brute force never evaluates
// the bound it tests.
//
// The negative control debits with the whole population's amplification,
// subsampled-shuffle{n, k, eps0}, as if the shards were one shuffle: the
// exact divergence must exceed that on some instance.

// shardBatch returns the exact distribution of one shard's batch (the
// number of ones among the reports of k of the bits, sampled without
// replacement) under binary randomized response at eps0.
func shardBatch(bits []int, k int, eps0 float64) []float64 {
	p1 := func(b int) float64 { // Pr[RR(b) = 1]
		e := math.Exp(eps0)
		if b == 1 {
			return e / (e + 1)
		}
		return 1 / (e + 1)
	}
	out := make([]float64, k+1)
	subsets := kSubsets(len(bits), k)
	w := 1 / float64(len(subsets))
	for _, s := range subsets {
		d := []float64{1} // distribution of the count of ones so far
		for _, i := range s {
			q := p1(bits[i])
			next := make([]float64, len(d)+1)
			for c, pc := range d {
				next[c] += pc * (1 - q)
				next[c+1] += pc * q
			}
			d = next
		}
		for c, pc := range d {
			out[c] += w * pc
		}
	}
	return out
}

// kSubsets lists the k-subsets of {0..n-1} in lexicographic order.
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

// view returns the exact distribution of the server's view of rounds
// rounds: the tuple of every shard's batch in every round.
func view(p Plan, data []int, eps0 float64, rounds int) map[string]float64 {
	round := map[string]float64{"": 1}
	for _, part := range p.Parts {
		b := shardBatch(data[part.Lo:part.Hi], int(part.K), eps0)
		next := map[string]float64{}
		for key, pk := range round {
			for c, pc := range b {
				if pc > 0 {
					next[key+"/"+strconv.Itoa(c)] += pk * pc
				}
			}
		}
		round = next
	}
	out := map[string]float64{"": 1}
	for range rounds {
		next := map[string]float64{}
		for a, pa := range out {
			for b, pb := range round {
				next[a+"|"+b] += pa * pb
			}
		}
		out = next
	}
	return out
}

// renyi returns D_alpha(P||Q) (+Inf when P is not absolutely continuous
// with respect to Q), in log space.
func renyi(p, q map[string]float64, alpha float64) float64 {
	terms := []float64{}
	for key, pv := range p {
		if pv <= 0 {
			continue
		}
		qv := q[key]
		if qv <= 0 {
			return math.Inf(1)
		}
		terms = append(terms, alpha*math.Log(pv)+(1-alpha)*math.Log(qv))
	}
	m := math.Inf(-1)
	for _, x := range terms {
		m = max(m, x)
	}
	s := 0.0
	for _, x := range terms {
		s += math.Exp(x - m)
	}
	return (m + math.Log(s)) / (alpha - 1)
}

var bruteOrders = []float64{1.5, 2, 3, 4, 8, 16, 32}

// roundCurve returns the per-round RDP at the brute force's orders that the
// ledger debits for a round of k reports of n at eps0.
func roundCurve(t *testing.T, n, k int64, eps0 float64) map[float64]float64 {
	t.Helper()
	e, err := event.RoundEvent(event.Round{Randomizer: "rinf", Participation: event.ParticipationSample, N: n, Reports: k, Eps0: eps0})
	if err != nil {
		t.Fatal(err)
	}
	if e.Mechanism != event.SubsampledShuffle || e.N != n || e.K != k {
		t.Fatalf("a round of %d of %d is debited as %v", k, n, e)
	}
	c, err := route.Curve(e, "")
	if err != nil {
		t.Fatal(err)
	}
	out := map[float64]float64{}
	for _, a := range bruteOrders {
		if out[a], err = c.RDP(a); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// bruteCase is one instance of the sweep.
type bruteCase struct {
	n, k   int64
	shards int
	eps0   float64
	rounds int
}

// worstRatio returns, over every dataset of bits whose neighbour differs in
// client j, every j, both directions and the orders, the largest ratio of
// the exact divergence of the server's view to the debit: rounds x
// debit(j's shard), where debit is given the shard's (n_s, k_s) and the
// whole run's (n, k).
func worstRatio(t *testing.T, c bruteCase, debit func(part Part, n, k int64) map[float64]float64) (float64, string) {
	t.Helper()
	p, err := Split("brute", c.n, c.k, c.shards)
	if err != nil {
		t.Fatal(err)
	}
	worst, at := 0.0, ""
	for mask := range 1 << c.n {
		data := make([]int, c.n)
		for i := range data {
			data[i] = mask >> i & 1
		}
		v := view(p, data, c.eps0, c.rounds)
		for j := range c.n {
			if data[j] != 0 { // each neighbouring pair once: j's bit 0 here, 1 there
				continue
			}
			d2 := append([]int(nil), data...)
			d2[j] = 1
			v2 := view(p, d2, c.eps0, c.rounds)
			part := p.Parts[p.Of(int(j))]
			b := debit(part, c.n, c.k)
			for _, a := range bruteOrders {
				bound := float64(c.rounds) * b[a]
				for _, dv := range []float64{renyi(v, v2, a), renyi(v2, v, a)} {
					r := dv / bound
					if r > worst {
						worst, at = r, fmt.Sprintf("n=%d k=%d shards=%d eps0=%g rounds=%d data=%v client %d (shard %d: n_s=%d k_s=%d) order %g: divergence %.6g, debited %.6g",
							c.n, c.k, c.shards, c.eps0, c.rounds, data, j, part.Index, part.N(), part.K, a, dv, bound)
					}
				}
			}
		}
	}
	return worst, at
}

func bruteCases() []bruteCase {
	var out []bruteCase
	for _, e := range []float64{0.5, 1, 2, 4} {
		for _, c := range []bruteCase{
			{n: 4, k: 2, shards: 2, rounds: 2},
			{n: 4, k: 2, shards: 2, rounds: 3},
			{n: 4, k: 4, shards: 2, rounds: 2},
			{n: 5, k: 2, shards: 2, rounds: 2},
			{n: 6, k: 3, shards: 3, rounds: 2},
			{n: 6, k: 4, shards: 2, rounds: 2},
		} {
			c.eps0 = e
			out = append(out, c)
		}
	}
	return out
}

func TestShardsBruteForce(t *testing.T) {
	curves := map[string]map[float64]float64{}
	own := func(part Part, _, _ int64) map[float64]float64 {
		key := fmt.Sprint(part.N(), part.K)
		if curves[key] == nil {
			curves[key] = roundCurve(t, part.N(), part.K, eps0Now)
		}
		return curves[key]
	}
	worstAll, worstAt := 0.0, ""
	for _, c := range bruteCases() {
		eps0Now = c.eps0
		clear(curves)
		x, at := worstRatio(t, c, own)
		if x > 1+1e-9 {
			t.Errorf("the server's view exceeds the shard's debit: ratio %.6g at %s", x, at)
		}
		if x > worstAll {
			worstAll, worstAt = x, at
		}
	}
	t.Logf("largest ratio of the exact divergence to the shard's debit over %d instances: %.6g at %s", len(bruteCases()), worstAll, worstAt)
}

// eps0Now is the eps0 of the instance the debit closures price.
var eps0Now float64

func TestShardsBruteForceNegativeControl(t *testing.T) {
	whole := func(_ Part, n, k int64) map[float64]float64 { return roundCurve(t, n, k, eps0Now) }
	worst, at := 0.0, ""
	for _, c := range []bruteCase{
		{n: 4, k: 2, shards: 2, eps0: 0.5, rounds: 2},
		{n: 4, k: 2, shards: 2, eps0: 1, rounds: 3},
		{n: 6, k: 3, shards: 3, eps0: 1, rounds: 2},
	} {
		eps0Now = c.eps0
		if x, a := worstRatio(t, c, whole); x > worst {
			worst, at = x, a
		}
	}
	if !(worst > 1+1e-6) {
		t.Fatalf("debiting the whole population's amplification stayed within the exact divergence (largest ratio %.6g at %s): the control cannot fail", worst, at)
	}
	t.Logf("the whole-population debit is exceeded: divergence/debited = %.4g at %s", worst, at)
}
