package accounting

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"os"
	"sort"
	"testing"
)

// Tests that try to break the clone-pair bound (docs/proofs/clones-rdp.md) against
// testdata/bruteforce_shuffle.json, written by testdata/bruteforce_shuffle.py:
// the exact output distribution of the subsampled shuffle model for n <= 6
// clients, every k, nine values of eps0, binary, 3-ary and 4-ary randomized
// response and hundreds of random eps0-LDP matrices (most of them extremal:
// some likelihood ratio exactly e^eps0), every multiset of the other clients'
// inputs, every pair of inputs of client 1, both directions, 16 real and
// integer orders; Rényi divergences in mpmath at 50 digits, the maximum over
// all instances kept per (n, k, eps0, order) together with the instance.
// The oracle never evaluates the bound it tests; it also writes the bound's
// formula B(lambda) straight from its statement, and the exact RDP of the
// configurations KRR3Lower says it maximises over.

// bruteOracleRelTol is the relative error of the oracle's values: mpmath at
// 50 significant digits (sums of positive terms, so the arithmetic error is
// near 1e-48), written with 22 significant digits (a decimal rounding error
// of at most 5e-22 relative). A bound value below the oracle by more than
// this is below the exact value. It is far below float64 resolution, so it
// can hide no violation the Go code could make.
const bruteOracleRelTol = 1e-21

// bruteKRR3RelTol is the same for the krr3 rows, written with 20 digits.
const bruteKRR3RelTol = 1e-19

// krr3MatchRelTol: KRR3Lower must equal the exact value to this relative
// accuracy. The target was 1e-9; KRR3Lower deliberately rounds
// its result down (its doc comment), and on every row of the oracle that
// costs 1.0e-9 to 1.1e-9 relative, so 2e-9 admits that rounding and nothing
// larger.
const krr3MatchRelTol = 2e-9

type bruteforceFile struct {
	Orders              []float64       `json:"orders"`
	Eps0                []float64       `json:"eps0"`
	Families            []string        `json:"families"`
	InstanceCounts      map[string]int  `json:"instance_counts"`
	DivergencesScreened int64           `json:"divergences_screened"`
	ExactInstances      int             `json:"exact_instances"`
	Randomizers         int             `json:"randomizers"`
	Instances           []bruteInstance `json:"instances"`
	Upper               []bruteUpperRow `json:"upper"`
	KRR3                []bruteKRR3Row  `json:"krr3"`
	BRRBig              []bruteKRR3Row  `json:"brr_big"` // binary RR fields only
}

// bruteInstance is the worst instance of a row: the randomizer, the other
// clients' input counts and client 1's two inputs.
type bruteInstance struct {
	Family     string      `json:"family"`
	Randomizer int         `json:"randomizer"`
	Eps0       float64     `json:"eps0"`
	Matrix     [][]float64 `json:"matrix"`
	MaxRatio   float64     `json:"max_ratio_over_e_eps0"`
	N          int64       `json:"n"`
	K          int64       `json:"k"`
	Others     []int       `json:"others"`
	X1         int         `json:"x1"`
	X1p        int         `json:"x1p"`
	Direction  string      `json:"direction"`
}

func (b bruteInstance) String() string {
	return fmt.Sprintf("%s randomizer #%d M=%v (max ratio %.15g e^eps0), other clients' input counts %v, "+
		"client 1 input x1=%d vs x1'=%d, %s", b.Family, b.Randomizer, b.Matrix, b.MaxRatio,
		b.Others, b.X1, b.X1p, b.Direction)
}

type bruteUpperRow struct {
	N       int64   `json:"n"`
	K       int64   `json:"k"`
	Eps0    float64 `json:"eps0"`
	Order   float64 `json:"order"`
	Exact   string  `json:"exact"`   // max over all instances, 22 digits
	Worst   int     `json:"worst"`   // index into Instances
	Formula string  `json:"formula"` // the clone-pair formula B(lambda), mpmath
	// Families holds the per-family maxima in the order of
	// bruteforceFile.Families (12 digits, for tracing a failure).
	Families []float64 `json:"families"`
}

// bruteKRR3Row: exact RDP of the configurations in KRR3Lower's doc comment.
type bruteKRR3Row struct {
	N           int64   `json:"n"`
	K           int64   `json:"k"`
	Eps0        float64 `json:"eps0"`
	Order       float64 `json:"order"`
	KRR3        string  `json:"krr3"`          // 3-RR, others 2, 0 vs 1 (symmetric)
	KRR3Same    string  `json:"krr3_same"`     // 3-RR, others 0, D(x1=0 || x1'=1)
	KRR3SameRev string  `json:"krr3_same_rev"` // its reverse
	BRRThm2     string  `json:"brr_thm2"`      // binary RR, NeurIPS'21 Thm 2: D(M(D')||M(D))
	BRRThm2Rev  string  `json:"brr_thm2_rev"`  // its reverse
}

func (r bruteKRR3Row) configs() map[string]string {
	return map[string]string{
		"krr3": r.KRR3, "krr3-same": r.KRR3Same, "krr3-same-rev": r.KRR3SameRev,
		"brr-thm2": r.BRRThm2, "brr-thm2-rev": r.BRRThm2Rev,
	}
}

func loadBruteforce(t *testing.T) *bruteforceFile {
	t.Helper()
	b, err := os.ReadFile("testdata/bruteforce_shuffle.json")
	if err != nil {
		t.Fatal(err)
	}
	var f bruteforceFile
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	// The file must cover what it claims: every n <= 6, every k, every
	// eps0 and order, and every family.
	want := 0
	for n := 1; n <= 6; n++ {
		want += n
	}
	want *= len(f.Eps0) * len(f.Orders)
	if len(f.Upper) != want || want == 0 {
		t.Fatalf("bruteforce_shuffle.json has %d upper rows, want %d", len(f.Upper), want)
	}
	for _, fam := range f.Families {
		if f.InstanceCounts[fam] == 0 {
			t.Fatalf("family %q has no instances", fam)
		}
	}
	for i, r := range f.Upper {
		if r.Worst < 0 || r.Worst >= len(f.Instances) || len(r.Families) != len(f.Families) {
			t.Fatalf("upper row %d malformed: %+v", i, r)
		}
	}
	if len(f.KRR3) == 0 {
		t.Fatal("no krr3 rows")
	}
	return &f
}

// bigDec parses an oracle value exactly (to 256 bits).
func bigDec(t *testing.T, s string) *big.Float {
	t.Helper()
	x, ok := new(big.Float).SetPrec(256).SetString(s)
	if !ok || x.Sign() < 0 {
		t.Fatalf("bad oracle value %q", s)
	}
	return x
}

// relMargin returns (v - exact)/exact computed in 256-bit arithmetic, so
// that the float64 v is compared with the oracle without rounding it.
func relMargin(v float64, exact *big.Float) float64 {
	d := new(big.Float).SetPrec(256).SetFloat64(v)
	d.Sub(d, exact)
	if exact.Sign() == 0 {
		f, _ := d.Float64()
		return f
	}
	d.Quo(d, exact)
	f, _ := d.Float64()
	return f
}

type nke struct {
	n, k int64
	eps0 float64
}

// curveCache builds each curve once per (n, k, eps0).
type curveCache struct {
	build func(n, k int64, eps0 float64) (RDP, error)
	m     map[nke]RDP
}

func newCurveCache(build func(n, k int64, eps0 float64) (RDP, error)) *curveCache {
	return &curveCache{build: build, m: map[nke]RDP{}}
}

func (c *curveCache) eval(t *testing.T, n, k int64, eps0, order float64) float64 {
	t.Helper()
	key := nke{n, k, eps0}
	r, ok := c.m[key]
	if !ok {
		var err error
		r, err = c.build(n, k, eps0)
		if err != nil {
			t.Fatalf("n=%d k=%d eps0=%v: %v", n, k, eps0, err)
		}
		c.m[key] = r
	}
	v, err := r.RDP(order)
	if err != nil {
		t.Fatalf("%s n=%d k=%d eps0=%v order=%v: %v", r.Name(), n, k, eps0, order, err)
	}
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		t.Fatalf("%s n=%d k=%d eps0=%v order=%v = %v", r.Name(), n, k, eps0, order, v)
	}
	return v
}

type margin struct {
	rel  float64
	desc string
}

func logTightest(t *testing.T, what string, ms []margin, count int) {
	t.Helper()
	sort.Slice(ms, func(i, j int) bool { return ms[i].rel < ms[j].rel })
	for i := 0; i < count && i < len(ms); i++ {
		t.Logf("%s #%d: %s", what, i+1, ms[i].desc)
	}
}

// TestBruteforceClonesRDPNeverBelowExact: ClonesRDP(n, k, eps0) at every
// order is at least the largest exact Rényi divergence found by brute force.
func TestBruteforceClonesRDPNeverBelowExact(t *testing.T) {
	f := loadBruteforce(t)
	upper := newCurveCache(ClonesRDP)
	var ms []margin
	for _, r := range f.Upper {
		exact := bigDec(t, r.Exact)
		v := upper.eval(t, r.N, r.K, r.Eps0, r.Order)
		m := relMargin(v, exact)
		inst := f.Instances[r.Worst]
		desc := fmt.Sprintf("n=%d k=%d eps0=%v order=%v: ClonesRDP=%.17g exact=%s, relative margin %.3g; worst instance: %v",
			r.N, r.K, r.Eps0, r.Order, v, r.Exact, m, inst)
		if m < -bruteOracleRelTol {
			t.Errorf("VIOLATION: bound below the exact RDP of the mechanism: %s; per-family maxima %v = %v",
				desc, f.Families, r.Families)
		}
		ms = append(ms, margin{m, desc})
	}
	t.Logf("%d (n, k, eps0, order) points, maxima over %d randomizers and %d screened divergences (%d recomputed in mpmath); instances per family %v",
		len(f.Upper), f.Randomizers, f.DivergencesScreened, f.ExactInstances, f.InstanceCounts)
	logTightest(t, "tightest margin", ms, 5)
}

// TestBruteforceClonesRDPIsTheFormula: ClonesRDP is the clone-pair formula
// B(lambda) (written by the oracle straight from its statement): never
// below it (its doc comment says it is never below the exact clone-pair
// bound) and not looser than 1e-6 relative (so it is the formula and not
// merely some larger number; at these tiny k nothing needs bucketing).
func TestBruteforceClonesRDPIsTheFormula(t *testing.T) {
	f := loadBruteforce(t)
	upper := newCurveCache(ClonesRDP)
	var ms []margin
	worst := 0.0
	for _, r := range f.Upper {
		formula := bigDec(t, r.Formula)
		v := upper.eval(t, r.N, r.K, r.Eps0, r.Order)
		m := relMargin(v, formula)
		desc := fmt.Sprintf("n=%d k=%d eps0=%v order=%v: ClonesRDP=%.17g formula=%s, relative %.3g",
			r.N, r.K, r.Eps0, r.Order, v, r.Formula, m)
		if m < -bruteOracleRelTol {
			t.Errorf("ClonesRDP below the clone-pair formula it claims to bound: %s", desc)
		}
		if m > 1e-6 {
			t.Errorf("ClonesRDP looser than the formula by more than 1e-6: %s", desc)
		}
		worst = math.Max(worst, m)
		ms = append(ms, margin{m, desc})
	}
	t.Logf("largest excess over the formula: %.3g relative", worst)
	logTightest(t, "closest to the formula", ms, 3)
}

// TestBruteforceFormulaAboveExact checks the oracle against itself: the
// issue's formula is above every exact value (if this fails, the formula,
// not the Go code, is broken).
func TestBruteforceFormulaAboveExact(t *testing.T) {
	f := loadBruteforce(t)
	for _, r := range f.Upper {
		exact, formula := bigDec(t, r.Exact), bigDec(t, r.Formula)
		lim := new(big.Float).SetPrec(256).Mul(formula, big.NewFloat(1+bruteOracleRelTol))
		if exact.Cmp(lim) > 0 {
			t.Errorf("FORMULA VIOLATION n=%d k=%d eps0=%v order=%v: exact %s > formula %s; instance %v",
				r.N, r.K, r.Eps0, r.Order, r.Exact, r.Formula, f.Instances[r.Worst])
		}
	}
}

// TestBruteforceKRR3LowerExact: KRR3Lower equals the largest exact value
// over the configurations its doc comment lists (relative 1e-9) and, being
// rounded down, never exceeds it; each configuration is one of the
// brute-force instances, so it is also below their maximum.
func TestBruteforceKRR3LowerExact(t *testing.T) {
	f := loadBruteforce(t)
	lower := newCurveCache(KRR3Lower)
	type nkeOrder struct {
		nke
		order float64
	}
	exactUpper := map[nkeOrder]string{}
	for _, r := range f.Upper {
		exactUpper[nkeOrder{nke{r.N, r.K, r.Eps0}, r.Order}] = r.Exact
	}
	thm2 := newCurveCache(SubsampledShuffleLower)
	wins := map[string]int{}
	worst := 0.0
	for _, r := range f.KRR3 {
		// The oracle's binary RR configuration is NeurIPS'21 Thm 2's, which
		// SubsampledShuffleLower evaluates at integer orders (a check of
		// the oracle against code written before it).
		if r.Order == math.Trunc(r.Order) && r.Eps0 > 0 {
			v := thm2.eval(t, r.N, r.K, r.Eps0, r.Order)
			if m := relMargin(v, bigDec(t, r.BRRThm2)); math.Abs(m) > 1e-9 {
				t.Errorf("oracle's Thm 2 configuration %s != SubsampledShuffleLower %.17g (relative %.3g) at n=%d k=%d eps0=%v order=%v",
					r.BRRThm2, v, m, r.N, r.K, r.Eps0, r.Order)
			}
		}
		var want *big.Float
		arg := ""
		for name, s := range r.configs() {
			x := bigDec(t, s)
			if want == nil || x.Cmp(want) > 0 {
				want, arg = x, name
			}
		}
		wins[arg]++
		v := lower.eval(t, r.N, r.K, r.Eps0, r.Order)
		m := relMargin(v, want)
		desc := fmt.Sprintf("n=%d k=%d eps0=%v order=%v: KRR3Lower=%.17g, exact max %s (configuration %s), relative %.3g; all: %v",
			r.N, r.K, r.Eps0, r.Order, v, want.Text('g', 20), arg, m, r.configs())
		if math.Abs(m) > krr3MatchRelTol {
			t.Errorf("KRR3Lower is not the exact value: %s", desc)
		}
		if m > bruteKRR3RelTol {
			t.Errorf("KRR3Lower above the exact value it claims (it rounds down): %s", desc)
		}
		worst = math.Max(worst, math.Abs(m))
		if s, ok := exactUpper[nkeOrder{nke{r.N, r.K, r.Eps0}, r.Order}]; ok {
			if relMargin(v, bigDec(t, s)) > bruteOracleRelTol {
				t.Errorf("KRR3Lower above the brute-force maximum %s: %s", s, desc)
			}
		}
	}
	t.Logf("%d rows, largest relative difference %.3g; configuration attaining the maximum: %v", len(f.KRR3), worst, wins)
}

// TestBruteforceKRR3LowerReachesThm2Configs: at large k the oracle has the
// binary RR configurations only (NeurIPS'21 Thm 2's and its reverse);
// KRR3Lower maximises over configurations that include them, so it must
// reach the larger of the two (up to its deliberate downward rounding).
func TestBruteforceKRR3LowerReachesThm2Configs(t *testing.T) {
	f := loadBruteforce(t)
	if len(f.BRRBig) == 0 {
		t.Fatal("no brr_big rows")
	}
	lower := newCurveCache(KRR3Lower)
	worst := 0.0
	for _, r := range f.BRRBig {
		want, arg := bigDec(t, r.BRRThm2), "brr-thm2"
		if x := bigDec(t, r.BRRThm2Rev); x.Cmp(want) > 0 {
			want, arg = x, "brr-thm2-rev"
		}
		v := lower.eval(t, r.N, r.K, r.Eps0, r.Order)
		m := relMargin(v, want)
		if m < -krr3MatchRelTol {
			t.Errorf("KRR3Lower below its own binary RR configuration: n=%d k=%d eps0=%v order=%v: KRR3Lower=%.17g, exact %s (%s) %s, relative %.3g",
				r.N, r.K, r.Eps0, r.Order, v, arg, want.Text('g', 20), map[string]string{"brr-thm2": r.BRRThm2, "brr-thm2-rev": r.BRRThm2Rev}, m)
		}
		worst = math.Min(worst, m)
	}
	t.Logf("%d rows; most negative (KRR3Lower - exact)/exact: %.3g", len(f.BRRBig), worst)
}

// TestBruteforceKRR3LowerBelowClonesRDP: the lower bound never exceeds the
// upper bound, on every row of the oracle and on a grid of larger models.
func TestBruteforceKRR3LowerBelowClonesRDP(t *testing.T) {
	f := loadBruteforce(t)
	upper, lower := newCurveCache(ClonesRDP), newCurveCache(KRR3Lower)
	type point struct {
		n, k        int64
		eps0, order float64
	}
	var pts []point
	for _, r := range f.Upper {
		pts = append(pts, point{r.N, r.K, r.Eps0, r.Order})
	}
	for _, r := range append(f.KRR3, f.BRRBig...) {
		pts = append(pts, point{r.N, r.K, r.Eps0, r.Order})
	}
	grid := [][2]int64{{100, 1}, {100, 10}, {100, 100}}
	if !testing.Short() {
		grid = append(grid, [2]int64{10000, 10}, [2]int64{10000, 1000}, [2]int64{60000, 10000}, [2]int64{1000000, 1000})
	}
	for _, nk := range grid {
		for _, e0 := range []float64{0.1, 0.5, 1, 2, 4} {
			for _, o := range []float64{1.01, 1.5, 2, 8, 32.5, 128, 1024} {
				pts = append(pts, point{nk[0], nk[1], e0, o})
			}
		}
	}
	minGap := math.Inf(1)
	for _, p := range pts {
		lo := lower.eval(t, p.n, p.k, p.eps0, p.order)
		up := upper.eval(t, p.n, p.k, p.eps0, p.order)
		if lo > up {
			t.Errorf("KRR3Lower %.17g > ClonesRDP %.17g at n=%d k=%d eps0=%v order=%v", lo, up, p.n, p.k, p.eps0, p.order)
		}
		if up > 0 {
			minGap = math.Min(minGap, (up-lo)/up)
		}
	}
	t.Logf("%d points; smallest (upper-lower)/upper = %.3g", len(pts), minGap)
}

// TestBruteforceTightnessAtK1 checks what is true of the claim
// that at k = 1 the bound is attained: with n = 1 (g = 1) the clone pair is
// binary randomized response itself and the bound is attained (to 1e-11
// relative) by the worst instance, which is binary RR; with n > 1 it is not
// attained at any finite order (B(lambda) charges the curve of D(X||Y) and
// of D(Y||X) with the same H_a(P_g||Q_c), and no pair has both: the oracle
// measures exact/bound down to 0.79 at order 1.1), but both tend to the
// largest privacy loss log(1 + g(e^eps0 - 1)) as the order grows, so at the
// largest order the gap must be small.
func TestBruteforceTightnessAtK1(t *testing.T) {
	f := loadBruteforce(t)
	upper := newCurveCache(ClonesRDP)
	maxOrder := f.Orders[len(f.Orders)-1]
	gapByOrder := map[float64]float64{}
	beatsRR := map[float64]int{}
	rr2 := -1
	for i, fam := range f.Families {
		if fam == "rr2" {
			rr2 = i
		}
	}
	if rr2 < 0 {
		t.Fatal("no rr2 family in the oracle")
	}
	for _, r := range f.Upper {
		if r.K != 1 {
			continue
		}
		exact := bigDec(t, r.Exact)
		v := upper.eval(t, r.N, r.K, r.Eps0, r.Order)
		gap := relMargin(v, exact) // (bound - exact)/exact
		inst := f.Instances[r.Worst]
		desc := fmt.Sprintf("n=%d k=1 eps0=%v order=%v: ClonesRDP=%.17g exact=%s (gap %.3g); worst instance %v",
			r.N, r.Eps0, r.Order, v, r.Exact, gap, inst)
		switch {
		case r.N == 1 && gap > 1e-11:
			t.Errorf("not attained at n=k=1: %s", desc)
		case r.N == 1 && len(inst.Matrix) > 0 && r.Families[rr2] < 0.999999999*maxOf(r.Families):
			t.Errorf("at n=k=1 the worst randomizer is not binary RR: %s", desc)
		case r.N > 1 && r.Order == maxOrder && gap > 1e-6:
			t.Errorf("not tight at the largest order: %s", desc)
		}
		if r.N > 1 {
			gapByOrder[r.Order] = math.Max(gapByOrder[r.Order], gap)
			if r.Families[rr2] < (1-1e-10)*maxOf(r.Families) {
				beatsRR[r.Order]++
			}
		}
	}
	for _, o := range f.Orders {
		t.Logf("k=1, n=2..6, order %v: largest (bound-exact)/exact %.3g; rows where a randomizer beats binary RR: %d",
			o, gapByOrder[o], beatsRR[o])
	}
}

func maxOf(xs []float64) float64 {
	m := math.Inf(-1)
	for _, x := range xs {
		m = math.Max(m, x)
	}
	return m
}
