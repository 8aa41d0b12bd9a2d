package shuffler

import (
	"encoding/json"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
)

// Exact brute force of the check-in case of the dummy-report argument
// (docs/proofs/dummy-reports.md, "Check-in rounds"): the shuffler flips
// every enrolled client's check-in coin (probability rate, independent of
// everything), asks the selected clients, and at the deadline puts a dummy
// R(x0) in the place of every selected client that did not deliver; a draw
// that selects nobody is drawn again (the shuffler never relays an empty
// round). The server sees the multiset of the |S| reports — its size
// included — and nothing else.
//
// What is debited. The ledger's check-in event (checkin-gaussian, eq. (11)
// of the ICLR'23 submission) is a binomial mixture over the batch size K of
// per-size bounds: the released view is (K, the shuffled K reports), K ~
// Bin(n, rate) public. The accountant has that curve for the Gaussian
// randomizer only; for the eps0-LDP randomizers of this brute force the
// same structure is built from the ledger's own k-of-n curve: given K = k
// the selected set is a uniform k-subset, so
//
//	exp((a-1) B(a)) = sum_k Bin(k; n, rate) exp((a-1) eps_{n,k}(a)),  eps_{n,0} = 0,
//
// eps_{n,k} the subsampled-shuffle{n, k, eps0} curve the ledger debits for
// a sampled round. Redrawing an empty selection conditions on K >= 1, whose
// moment is (M - p0)/(1 - p0), p0 = (1-rate)^n (the conditioned debit, see
// the proof; a run with p0 > 2^-64 is refused). Each instance is checked
// against that bound AND against the exact largest divergence of the
// complete mechanism (no dropout) over every neighbouring pair of the
// domain, which is what the theorem asserts.

// checkinDist returns the exact distribution of the extended histogram of
// one check-in round on data: each client is selected independently with
// probability rate (cond: conditioned on at least one); a selected client
// i delivers R(x_i) unless it drops out (probability dropout(i, data, S)),
// in which case, with pad, a dummy R(x0) takes its place (symbol o+y) and,
// without, nothing does (the client-side coin of the former check-in, whose
// dropouts were simply absent).
func checkinDist(in instance, data []int, rate float64, pad, cond bool) map[hist]float64 {
	o := len(in.r.m[0])
	out := map[hist]float64{}
	p0 := math.Pow(1-rate, float64(in.n))
	for mask := range 1 << in.n {
		size := bits.OnesCount(uint(mask))
		if cond && size == 0 {
			continue
		}
		w := math.Pow(rate, float64(size)) * math.Pow(1-rate, float64(in.n-size))
		if cond {
			w /= 1 - p0
		}
		if w == 0 {
			continue
		}
		var s []int
		for i := range in.n {
			if mask>>i&1 == 1 {
				s = append(s, i)
			}
		}
		cur := map[hist]float64{{}: w}
		for _, i := range s {
			p := in.dropout(i, data, s)
			sym := make([]float64, 2*o)
			for y := range o {
				sym[y] = (1 - p) * in.r.m[data[i]][y]
				if pad {
					sym[o+y] = p * in.r.m[0][y]
				}
			}
			absent := 0.0
			if !pad {
				absent = p
			}
			next := map[hist]float64{}
			for h, q := range cur {
				if absent > 0 {
					next[h] += q * absent
				}
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

// checkinBound is the debited check-in curve B(a) described above (cond:
// conditioned on a non-empty selection).
func checkinBound(t *testing.T, c debited, n int, rate, eps0, order float64, cond bool) float64 {
	t.Helper()
	p0 := math.Pow(1-rate, float64(n))
	m := p0
	for k := 1; k <= n; k++ {
		lb := lchoose(n, k) + float64(k)*math.Log(rate)
		if k < n {
			lb += float64(n-k) * math.Log1p(-rate)
		}
		m += math.Exp(lb + (order-1)*c.at(t, n, k, eps0, order))
	}
	if cond {
		m = (m - p0) / (1 - p0)
	}
	return math.Log(m) / (order - 1)
}

func lchoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	d, _ := math.Lgamma(float64(n - k + 1))
	return a - b - d
}

// supComplete caches, per (randomizer, n, rate, cond), the exact largest
// Rényi divergence of the complete check-in mechanism (nobody drops out)
// over every neighbouring pair of datasets of the domain, at each order.
type supComplete map[string]map[float64]float64

func (s supComplete) at(rz ldp, n int, rate float64, cond bool, order float64) float64 {
	key := fmt.Sprintf("%s/%v/%d/%g/%v", rz.name, rz.m, n, rate, cond)
	if s[key] == nil {
		inputs := len(rz.m)
		none := func(int, []int, []int) float64 { return 0 }
		m := map[float64]float64{}
		for _, data := range assignments(nil, n, inputs, 1<<30) {
			for x1p := range inputs {
				if x1p == data[0] {
					continue
				}
				in := instance{r: rz, n: n, data: data, dropout: none}
				d2 := append([]int(nil), data...)
				d2[0] = x1p
				p := project(checkinDist(in, data, rate, true, cond), views["sound"], inputs)
				q := project(checkinDist(in, d2, rate, true, cond), views["sound"], inputs)
				for _, a := range bruteOrders {
					m[a] = max(m[a], renyi(p, q, a))
				}
			}
		}
		s[key] = m
	}
	return s[key][order]
}

// checkinRatios returns the largest ratios, over orders and both
// directions, of the instance's divergence (view v, rounds independent
// rounds) to the debited bound and to the complete mechanism's supremum.
func checkinRatios(t *testing.T, c debited, sup supComplete, in instance, rate float64, pad, cond bool, v view, rounds int) (toDebit, toSup, at float64) {
	t.Helper()
	o := len(in.r.m[0])
	d2 := append([]int(nil), in.data...)
	d2[0] = in.x1p
	p := project(checkinDist(in, in.data, rate, pad, cond), v, o)
	q := project(checkinDist(in, d2, rate, pad, cond), v, o)
	if rounds > 1 {
		p, q = power(p, rounds), power(q, rounds)
	}
	for _, a := range bruteOrders {
		b := float64(rounds) * checkinBound(t, c, in.n, rate, in.r.eps0, a, cond)
		s := float64(rounds) * sup.at(in.r, in.n, rate, cond, a)
		for _, dv := range []float64{renyi(p, q, a), renyi(q, p, a)} {
			if r := ratio(dv, b); r > toDebit {
				toDebit, at = r, a
			}
			toSup = max(toSup, ratio(dv, s))
		}
	}
	return toDebit, toSup, at
}

func ratio(dv, b float64) float64 {
	if b <= 0 {
		if dv > 1e-12 {
			return math.Inf(1)
		}
		return 0
	}
	return dv / b
}

var checkinRates = []float64{0.25, 0.5, 0.9, 1}

// TestCheckInDummyReportsBruteForce: shuffler-side coins with padding stay
// within the debited check-in bound, and within the complete mechanism's
// largest divergence, for binary and 3-ary RR and random extremal 3x3
// randomizers, n <= 4, rates 0.25 to 1, per-client and per-input dropout
// tables with 0 and 1; conditioned on a non-empty selection (what the
// shuffler does) and not (the ideal mechanism); in one round, and in two
// and three rounds with dropout decided once per run (persistent) or
// afresh each round.
func TestCheckInDummyReportsBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	c, sup := debited{}, supComplete{}
	count, worst, worstSup := 0, 0.0, 0.0
	var worstAt string
	for _, rz := range bruteRandomizers(r, 2) {
		inputs := len(rz.m)
		for n := 1; n <= 4; n++ {
			for _, rate := range checkinRates {
				for _, data := range assignments(r, n, inputs, 6) {
					x1p := (data[0] + 1 + r.IntN(inputs-1)) % inputs
					ts := [][][]float64{constTable(n, inputs, 0), constTable(n, inputs, 1)}
					t1 := constTable(n, inputs, 0)
					t1[0][data[0]] = 1 // client 1 drops out exactly when it holds x1
					ts = append(ts, t1, dropoutTable(r, n, inputs), dropoutTable(r, n, inputs))
					for _, tb := range ts {
						in := instance{r: rz, n: n, data: data, x1p: x1p, dropout: ownDropout(tb), fixed: -1,
							desc: fmt.Sprintf("(check-in: no k) rate %g dropout %v", rate, tb)}
						for _, cond := range []bool{true, false} {
							count++
							x, s, a := checkinRatios(t, c, sup, in, rate, true, cond, views["sound"], 1)
							if x > worst {
								worst, worstAt = x, fmt.Sprintf("%v cond=%v", in, cond)
							}
							worstSup = max(worstSup, s)
							if x > 1+bruteTol || s > 1+bruteTol {
								t.Fatalf("%v (empty selection redrawn: %v): divergence %.6g x the debited bound, %.6g x the complete mechanism's largest, at order %g",
									in, cond, x, s, a)
							}
						}
					}
				}
			}
		}
	}
	t.Logf("one round: %d instances x %d orders x 2 directions: largest divergence/debited %.6f (%s), largest divergence/complete-mechanism sup %.9f",
		count, len(bruteOrders), worst, worstAt, worstSup)
	if count < 2000 {
		t.Fatalf("only %d instances", count)
	}

	// Several rounds: dropout decided once per run (a device that is
	// offline stays offline: the view is the mixture over dropout states of
	// the product of the rounds) and afresh each round (the product).
	multi, worstM := 0, 0.0
	for _, rz := range bruteRandomizers(r, 0)[:4] {
		for n := 2; n <= 3; n++ {
			for _, rate := range []float64{0.5, 0.9} {
				for _, data := range assignments(r, n, 2, 4) {
					tb := dropoutTable(r, n, 2)
					for rounds := 2; rounds <= 3; rounds++ {
						x := persistentCheckinRatio(t, c, rz, n, rate, data, tb, rounds)
						in := instance{r: rz, n: n, data: data, x1p: 1 - data[0], dropout: ownDropout(tb), fixed: -1}
						y, s, _ := checkinRatios(t, c, sup, in, rate, true, true, views["sound"], rounds)
						multi += 2
						worstM = max(worstM, x, y)
						if x > 1+bruteTol || y > 1+bruteTol || s > 1+bruteTol {
							t.Fatalf("%s n=%d rate=%g data=%v dropout %v, %d rounds: persistent %.6g, per-round %.6g x the debited bound (%.6g x the complete sup)",
								rz.name, n, rate, data, tb, rounds, x, y, s)
						}
					}
				}
			}
		}
	}
	t.Logf("two and three rounds: %d instances, largest divergence/debited %.6f", multi, worstM)
}

// persistentCheckinRatio is the largest divergence/debited ratio of rounds
// check-in rounds (shuffler-side coins, padding, empty selections redrawn)
// in which client i is offline for the whole run with probability
// tb[i][x_i], x1 = data[0] vs 1 - data[0].
func persistentCheckinRatio(t *testing.T, c debited, rz ldp, n int, rate float64, data []int, tb [][]float64, rounds int) float64 {
	t.Helper()
	o := len(rz.m[0])
	mix := func(d []int) map[string]float64 {
		out := map[string]float64{}
		for state := range 1 << n {
			w := 1.0
			for i := range n {
				if p := tb[i][d[i]]; state>>i&1 == 1 {
					w *= p
				} else {
					w *= 1 - p
				}
			}
			if w == 0 {
				continue
			}
			in := instance{r: rz, n: n, fixed: -1, dropout: func(i int, _ []int, _ []int) float64 { return float64(state >> i & 1) }}
			for key, q := range power(project(checkinDist(in, d, rate, true, true), views["sound"], o), rounds) {
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
		b := float64(rounds) * checkinBound(t, c, n, rate, rz.eps0, a, true)
		worst = max(worst, ratio(renyi(p, q, a), b), ratio(renyi(q, p, a), b))
	}
	return worst
}

// TestCheckInNegativeControls: the variants the check-in argument rules out
// exceed the debited check-in bound on tiny instances.
//
//   - client-coin: the former networked check-in — each client flips its
//     own coin and a client that does not deliver is simply absent (no
//     dummy; the server sees how many answered). A client dropping out
//     exactly when it holds 1: infinite.
//   - client-coin-rates: the same with dropout independent of the data
//     (client 1 always delivers, the others never): still above the debit,
//     since the delivered set is not a Bin(n, rate) selection.
//   - dummy-count, early-release: shuffler-side coins and padding, but the
//     number of dummies, or whether every selected client delivered, is
//     published: infinite.
//   - empty-undebited: no dropout at all, empty selections redrawn but the
//     unconditioned curve debited (ignoring p0): above the debit — why a
//     run with p0 = (1-rate)^n > 2^-64 is refused.
func TestCheckInNegativeControls(t *testing.T) {
	c := debited{}
	rr := func(e float64) ldp { return ldp{name: "rr2", m: rrMatrix(2, e), eps0: e} }
	own := func(i int, data []int, _ []int) float64 {
		if i == 0 && data[0] == 1 {
			return 1
		}
		return 0
	}
	search := func(t *testing.T, v string, pad, cond, condBound bool, dropout func(int, []int, []int) float64) (float64, string) {
		worst, at := 0.0, ""
		for _, e := range []float64{0.5, 1, 2, 4} {
			for n := 1; n <= 4; n++ {
				for _, rate := range checkinRates {
					for _, data := range assignments(nil, n, 2, 16) {
						if data[0] != 1 {
							continue
						}
						in := instance{r: rr(e), n: n, data: data, x1p: 0, dropout: dropout, fixed: -1}
						o := 2
						p := project(checkinDist(in, data, rate, pad, cond), views[v], o)
						d2 := append([]int(nil), data...)
						d2[0] = 0
						q := project(checkinDist(in, d2, rate, pad, cond), views[v], o)
						for _, a := range bruteOrders {
							b := checkinBound(t, c, n, rate, e, a, condBound)
							for _, dv := range []float64{renyi(p, q, a), renyi(q, p, a)} {
								if x := ratio(dv, b); x > worst {
									worst, at = x, fmt.Sprintf("rr2 eps0=%g n=%d rate=%g data=%v x1'=0, order %g: %.4g vs %.4g debited", e, n, rate, data, a, dv, b)
								}
							}
						}
					}
				}
			}
		}
		return worst, at
	}
	none := func(int, []int, []int) float64 { return 0 }
	controls := []struct {
		name string
		run  func(t *testing.T) (float64, string)
	}{
		{"client-coin", func(t *testing.T) (float64, string) { return search(t, "sound", false, true, true, own) }},
		{"client-coin-rates", func(t *testing.T) (float64, string) {
			return search(t, "sound", false, true, true, func(i int, _ []int, _ []int) float64 { return float64(min(i, 1)) })
		}},
		{"dummy-count", func(t *testing.T) (float64, string) { return search(t, "dummy-count", true, true, true, own) }},
		{"early-release", func(t *testing.T) (float64, string) { return search(t, "early-release", true, true, true, own) }},
		{"empty-undebited", func(t *testing.T) (float64, string) { return search(t, "sound", true, true, false, none) }},
	}
	for _, ctl := range controls {
		t.Run(ctl.name, func(t *testing.T) {
			x, at := ctl.run(t)
			if !(x > 1+1e-6) {
				t.Fatalf("the broken variant stayed within the debited bound (largest ratio %.6g at %s)", x, at)
			}
			t.Logf("exceeds the debit: divergence/debited = %.4g at %s", x, at)
		})
	}
}

// TestCheckInBruteForceOracle checks checkinDist and renyi against an
// independent mpmath implementation, testdata/checkin_oracle.py (50
// digits): shuffler-side coins with padding and redrawn empty selections,
// and the former client-side coin without padding; within 1e-12 relative.
func TestCheckInBruteForceOracle(t *testing.T) {
	b, err := os.ReadFile("testdata/checkin_oracle.json")
	if err != nil {
		t.Fatal(err)
	}
	var rows []struct {
		Name             string
		Eps0, Rate       float64
		N                int
		Data             []int
		X1p              int
		Pad, Cond        bool
		Table            [][]float64
		Order            float64
		Forward, Reverse string
	}
	if err := json.Unmarshal(b, &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) < 6 {
		t.Fatalf("%d oracle rows, want at least 6", len(rows))
	}
	for _, r := range rows {
		in := instance{r: ldp{name: "rr2", m: rrMatrix(2, r.Eps0), eps0: r.Eps0}, n: r.N, data: r.Data, x1p: r.X1p,
			dropout: ownDropout(r.Table), fixed: -1}
		d2 := append([]int(nil), r.Data...)
		d2[0] = r.X1p
		p := project(checkinDist(in, r.Data, r.Rate, r.Pad, r.Cond), views["sound"], 2)
		q := project(checkinDist(in, d2, r.Rate, r.Pad, r.Cond), views["sound"], 2)
		for _, c := range []struct {
			got  float64
			want string
		}{{renyi(p, q, r.Order), r.Forward}, {renyi(q, p, r.Order), r.Reverse}} {
			if c.want == "inf" {
				if !math.IsInf(c.got, 1) {
					t.Fatalf("%s order %g: %.17g, oracle inf", r.Name, r.Order, c.got)
				}
				continue
			}
			want, err := strconv.ParseFloat(c.want, 64)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(c.got-want) > 1e-12*math.Abs(want)+1e-15 {
				t.Fatalf("%s order %g: %.17g, oracle %s", r.Name, r.Order, c.got, c.want)
			}
		}
	}
}
