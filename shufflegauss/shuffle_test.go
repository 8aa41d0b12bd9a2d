package shufflegauss

import (
	"encoding/json"
	"math"
	"os"
	"strconv"
	"testing"
)

// partitionLogMoment evaluates eq. 4 of the paper by enumerating the integer
// partitions of lambda into at most n parts (the paper's Algorithm 1 with
// the at-most-n-parts restriction that the public implementation misses).
// It is the independent oracle for the recurrences.
func partitionLogMoment(lambda int, n int64, sigma float64) float64 {
	h := 1 / (2 * sigma * sigma)
	lg := func(x float64) float64 { v, _ := math.Lgamma(x); return v }
	acc := math.Inf(-1)
	var rec func(rest, maxPart int, parts []int)
	rec = func(rest, maxPart int, parts []int) {
		if rest == 0 {
			r := len(parts)
			if int64(r) > n {
				return
			}
			// arrangements n!/((n-r)! prod mult!) times multinomial
			// lambda!/prod p!, divided by n^lambda: the falling factorial
			// is accumulated as sum log1p(-i/n) to stay exact at n = 1e9.
			lt := lg(float64(lambda)+1) - float64(lambda-r)*math.Log(float64(n))
			for i := 0; i < r; i++ {
				lt += math.Log1p(-float64(i) / float64(n))
			}
			sq := 0.0
			mult := map[int]int{}
			for _, p := range parts {
				lt -= lg(float64(p) + 1)
				sq += float64(p * p)
				mult[p]++
			}
			for _, c := range mult {
				lt -= lg(float64(c) + 1)
			}
			lt += sq * h
			if lt > acc {
				acc, lt = lt, acc
			}
			if !math.IsInf(lt, -1) {
				acc += math.Log1p(math.Exp(lt - acc))
			}
			return
		}
		for p := min(rest, maxPart); p >= 1; p-- {
			rec(rest-p, p, append(parts, p))
		}
	}
	rec(lambda, lambda, nil)
	return acc - float64(lambda)*h
}

func TestLogMomentMatchesPartitionEnumeration(t *testing.T) {
	for _, sigma := range []float64{0.5, 1, 2.5, 9.48} {
		for _, n := range []int64{1, 2, 3, 5, 8, 13, 40, 1000, 1000000000} {
			s, err := NewShuffle(sigma, n)
			if err != nil {
				t.Fatal(err)
			}
			for lam := 2; lam <= 16; lam++ {
				got, err := s.LogMoment(lam)
				if err != nil {
					t.Fatal(err)
				}
				want := partitionLogMoment(lam, n, sigma)
				if d := math.Abs(got - want); d > 1e-10*(1+math.Abs(want)) {
					t.Errorf("sigma=%g n=%d order=%d: recurrence %.15g, partitions %.15g", sigma, n, lam, got, want)
				}
			}
		}
	}
}

func TestSpecReferenceValues(t *testing.T) {
	for _, c := range []struct {
		lam   int
		n     int64
		sigma float64
		a     float64
	}{{2, 3, 1.0, 1.57276060948635}, {5, 4, 0.7, 2863168.8683811}, {8, 10, 2.0, 2.21818738349195}} {
		s, _ := NewShuffle(c.sigma, c.n)
		la, err := s.LogMoment(c.lam)
		if err != nil {
			t.Fatal(err)
		}
		// The reference values carry 14-15 digits; allow that plus slack.
		slack := logMomentSlack(c.lam, la, 1/(2*c.sigma*c.sigma))
		if got := math.Exp(la); math.Abs(la-math.Log(c.a)) > slack+2e-14 {
			t.Errorf("(%d,%d,%g): A = %.15g, want %.15g", c.lam, c.n, c.sigma, got, c.a)
		}
	}
}

type goldenFile struct {
	Partition []goldenMoment `json:"partition"`
	Miller    []goldenMoment `json:"miller"`
	Table1    []struct {
		Steps   int    `json:"steps"`
		Epsilon string `json:"epsilon"`
		Order   int    `json:"order"`
	} `json:"table1"`
	Table1Uncapped []struct {
		Steps   int    `json:"steps"`
		Epsilon string `json:"epsilon"`
		Order   int    `json:"order"`
	} `json:"table1_uncapped"`
	Subsampled []struct {
		Order int     `json:"order"`
		M     int64   `json:"m"`
		N     int64   `json:"n"`
		Sigma float64 `json:"sigma"`
		Eps   string  `json:"eps"`
	} `json:"subsampled"`
}

type goldenMoment struct {
	Order int     `json:"order"`
	N     int64   `json:"n"`
	Sigma float64 `json:"sigma"`
	LogA  string  `json:"log_a"`
}

func loadGolden(t *testing.T) goldenFile {
	t.Helper()
	b, err := os.ReadFile("testdata/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g goldenFile
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

func mustParse(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestLogMomentGolden compares with the 60-digit mpmath oracle
// (testdata/gen_golden.py): the result must be an upper bound (slack
// included) and within the slack plus a few ulps of the exact value.
func TestLogMomentGolden(t *testing.T) {
	g := loadGolden(t)
	for _, c := range append(g.Partition, g.Miller...) {
		s, _ := NewShuffle(c.Sigma, c.N)
		got, err := s.LogMoment(c.Order)
		if err != nil {
			t.Fatal(err)
		}
		want := mustParse(t, c.LogA)
		slack := logMomentSlack(c.Order, want, 1/(2*c.Sigma*c.Sigma))
		if got < want {
			t.Errorf("sigma=%g n=%d order=%d: %.17g below exact %.17g", c.Sigma, c.N, c.Order, got, want)
		}
		if got > want+slack*(1+1.0/8) {
			t.Errorf("sigma=%g n=%d order=%d: %.17g exceeds exact %.17g by more than slack %.3g", c.Sigma, c.N, c.Order, got, want, slack)
		}
		// The raw error must be far inside the slack (slack/8).
		if raw := got - slack; math.Abs(raw-want) > slack/8+2e-16*math.Abs(want) {
			t.Errorf("sigma=%g n=%d order=%d: raw error %.3g is not well inside slack %.3g", c.Sigma, c.N, c.Order, raw-want, slack)
		}
	}
}

// TestCorollary1 checks eps(lambda) <= lambda/(2 sigma^2) (Cor. 1) for the
// uncapped moments, up to the rounding slack, with equality at n = 1.
func TestCorollary1(t *testing.T) {
	for _, sigma := range []float64{0.3, 0.8, 2, 9.48, 50} {
		for _, n := range []int64{1, 2, 7, 100, 60000, 1000000000} {
			s, _ := NewShuffle(sigma, n)
			for _, lam := range []int{2, 3, 10, 64, 200} {
				la, err := s.LogMoment(lam)
				if err != nil {
					t.Fatal(err)
				}
				l := float64(lam)
				bound := l * (l - 1) / (2 * sigma * sigma)
				if la-logMomentSlack(lam, la, 1/(2*sigma*sigma)) > bound*(1+1e-14) {
					t.Errorf("sigma=%g n=%d order=%d: log A %.10g > Cor.1 %.10g", sigma, n, lam, la, bound)
				}
				if raw := la - logMomentSlack(lam, la, 1/(2*sigma*sigma)); n == 1 && math.Abs(raw-bound) > logMomentSlack(lam, bound, 1/(2*sigma*sigma)) {
					t.Errorf("n=1 must equal the Gaussian RDP: %g vs %g", la, bound)
				}
				eps, _ := s.RDP(l)
				if eps > l/(2*sigma*sigma)*(1+1e-14) || eps < 0 {
					t.Errorf("RDP(%d) = %g outside [0, %g]", lam, eps, l/(2*sigma*sigma))
				}
			}
		}
	}
}

// TestMonotoneInN checks that A(lambda) does not increase with n. (Proof:
// A_n = E[phi(mean of n i.i.d. likelihood factors)] with phi convex, and the
// mean of n is the average of the n leave-one-out means, so Jensen gives
// A_n <= A_{n-1}; the paper leaves this as an open question, eq. 12.)
func TestMonotoneInN(t *testing.T) {
	for _, sigma := range []float64{0.7, 3} {
		prev := make([]float64, 41)
		for i := range prev {
			prev[i] = math.Inf(1)
		}
		for _, n := range []int64{1, 2, 3, 5, 10, 20, 39, 40, 41, 100, 10000} {
			s, _ := NewShuffle(sigma, n)
			for lam := 2; lam <= 40; lam++ {
				la, _ := s.LogMoment(lam)
				raw := la - logMomentSlack(lam, la, 1/(2*sigma*sigma))
				if raw > prev[lam]*(1+1e-12)+1e-14 {
					t.Errorf("sigma=%g order=%d: log A rises from %g to %g at n=%d", sigma, lam, prev[lam], raw, n)
				}
				prev[lam] = raw
			}
		}
	}
}

// TestMillerMatchesPowering checks the two exact algorithms against each
// other where both apply (orders <= n+1).
func TestMillerMatchesPowering(t *testing.T) {
	for _, c := range []struct {
		n     int64
		sigma float64
	}{{300, 0.9}, {257, 4}, {1000, 9.48}} {
		tb := newTables(256)
		h := 1 / (2 * c.sigma * c.sigma)
		mil := millerLogMoments([]float64{0}, 256, float64(c.n), h, tb)
		pow := powerLogMoments(256, c.n, h, tb)
		for m := 2; m <= 256; m++ {
			if d := math.Abs(mil[m] - pow[m]); d > 1e-11*(1+math.Abs(mil[m])) {
				t.Errorf("n=%d sigma=%g m=%d: Miller %.15g, powering %.15g", c.n, c.sigma, m, mil[m], pow[m])
			}
		}
	}
}

// TestNonIntegerOrderInterpolation: the interpolated value lies between the
// neighbouring integer log-moments and is >= the Cor. 1-free chord.
func TestNonIntegerOrderInterpolation(t *testing.T) {
	s, _ := NewShuffle(2, 50)
	for _, lam := range []float64{1.5, 2.25, 7.9, 31.5} {
		eps, err := s.RDP(lam)
		if err != nil {
			t.Fatal(err)
		}
		lo, hi := math.Floor(lam), math.Floor(lam)+1
		a, _ := s.RDP(lo + 0) // lo may be 1: handled below
		if lo == 1 {
			a = 0
		} else {
			a *= lo - 1
		}
		b, _ := s.RDP(hi)
		b *= hi - 1
		want := ((hi-lam)*a + (lam-lo)*b) / (lam - 1)
		if math.Abs(eps-want) > 1e-12*want {
			t.Errorf("order %g: %g, want chord %g", lam, eps, want)
		}
	}
}

func TestValidation(t *testing.T) {
	for _, c := range []struct {
		sigma float64
		n     int64
	}{{0, 10}, {-1, 10}, {math.NaN(), 10}, {math.Inf(1), 10}, {1, 0}, {1, -5}} {
		if _, err := NewShuffle(c.sigma, c.n); err == nil {
			t.Errorf("NewShuffle(%g, %d) accepted", c.sigma, c.n)
		}
	}
	s, _ := NewShuffle(1, 10)
	for _, o := range []float64{1, 0.5, -2, math.NaN(), math.Inf(1), 1e9} {
		if _, err := s.RDP(o); err == nil {
			t.Errorf("RDP(%g) accepted", o)
		}
	}
	if _, err := s.LogMoment(0); err == nil {
		t.Error("LogMoment(0) accepted")
	}
}

func FuzzShuffleRDP(f *testing.F) {
	f.Add(1.0, int64(10), 2.0)
	f.Add(9.48, int64(60000), 30.0)
	f.Add(0.3, int64(3), 17.5)
	f.Add(100.0, int64(1000000000), 300.0)
	f.Fuzz(func(t *testing.T, sigma float64, n int64, order float64) {
		if order > 400 { // keep each fuzz case cheap
			order = math.Mod(order, 400)
		}
		if n > 1e12 {
			n = n % 1e12
		}
		s, err := NewShuffle(sigma, n)
		if err != nil {
			return
		}
		eps, err := s.RDP(order)
		if err != nil {
			return
		}
		if math.IsNaN(eps) || math.IsInf(eps, 0) || eps < 0 {
			t.Fatalf("sigma=%g n=%d order=%g: eps=%g", sigma, n, order, eps)
		}
		if eps > order/(2*sigma*sigma)*(1+1e-12) {
			t.Fatalf("sigma=%g n=%d order=%g: eps=%g exceeds Cor. 1", sigma, n, order, eps)
		}
	})
}
