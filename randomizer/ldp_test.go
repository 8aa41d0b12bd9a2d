package randomizer

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// discreteCases returns the discrete randomizers audited by the tests.
func discreteCases(t *testing.T) []Discrete {
	t.Helper()
	var rs []Discrete
	for _, eps0 := range []float64{0.01, 0.5, 1, 2, 4, 8, 20} {
		rr, err := NewBinaryRR(eps0, 1)
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, rr)
		for _, k := range []int{2, 3, 10, 100} {
			r, err := NewKRR(eps0, k)
			if err != nil {
				t.Fatal(err)
			}
			rs = append(rs, r)
		}
		for _, d := range []int{1, 2, 3, 7, 64, 100} {
			for _, a := range []float64{1, 0.01, 3.5} {
				ri, err := NewRInf(eps0, d, a)
				if err != nil {
					t.Fatal(err)
				}
				r1, err := NewR1(eps0, d, a)
				if err != nil {
					t.Fatal(err)
				}
				rs = append(rs, ri, r1)
			}
		}
	}
	return rs
}

// TestAuditExact verifies the two claims on which the privacy and
// convergence analyses rest, exactly from the output probabilities over
// each randomizer's input grid: every likelihood ratio is ≤ e^eps0, the
// bound is attained (the implementation does not waste privacy budget),
// probabilities sum to one, and decoding is unbiased up to rounding.
func TestAuditExact(t *testing.T) {
	for _, r := range discreteCases(t) {
		res, err := Audit(r)
		if err != nil {
			t.Fatalf("%s eps0=%g d=%d: %v", r.Name(), r.Eps0(), r.Dim(), err)
		}
		if !res.OK || res.MaxLogRatio > r.Eps0()+1e-13 {
			t.Errorf("%s eps0=%g d=%d radius=%g: max log ratio %.17g, rel bias %g", r.Name(), r.Eps0(), r.Dim(), r.Radius(), res.MaxLogRatio, res.MaxRelBias)
		}
		// Tightness: the grid contains inputs that attain the bound (up to
		// the 2^-64 rounding of the thresholds, relative to the minority
		// probability).
		if res.MaxLogRatio < r.Eps0()*(1-1e-9) {
			t.Errorf("%s eps0=%g d=%d: max log ratio %.17g is not tight", r.Name(), r.Eps0(), r.Dim(), res.MaxLogRatio)
		}
		if res.MaxProbSumError > 1e-13 {
			t.Errorf("%s eps0=%g d=%d: probabilities sum off by %g", r.Name(), r.Eps0(), r.Dim(), res.MaxProbSumError)
		}
		if res.MaxRelBias > 1e-13 {
			t.Errorf("%s eps0=%g d=%d: relative bias %g", r.Name(), r.Eps0(), r.Dim(), res.MaxRelBias)
		}
	}
}

// TestAuditDetectsViolation makes sure the audit can fail: a randomizer
// whose keep probability exceeds e^eps0/(e^eps0+1) must be flagged.
func TestAuditDetectsViolation(t *testing.T) {
	r, _ := NewBinaryRR(1, 1)
	r.eps0 = 0.9 // claims 0.9 but flips with the eps0 = 1 coin
	res, err := Audit(r)
	if err != nil {
		t.Fatal(err)
	}
	if res.OK || math.Abs(res.MaxLogRatio-1) > 1e-12 {
		t.Errorf("audit missed an eps0 violation: %+v", res)
	}
	ri, _ := NewRInf(1, 4, 1)
	ri.mag *= 1.001 // biased decoder
	res, err = Audit(ri)
	if err != nil {
		t.Fatal(err)
	}
	if res.OK || res.MaxRelBias < 1e-4 {
		t.Errorf("audit missed a biased decoder: %+v", res)
	}
}

// chiSquareCritical is the (1−alpha) quantile of the chi-square
// distribution with df degrees of freedom.
func chiSquareCritical(df int, alpha float64) float64 {
	return distuv.ChiSquared{K: float64(df)}.Quantile(1 - alpha)
}

// TestSamplerMatchesProbabilities checks that Randomize draws from exactly
// the distribution OutputProbabilities states (which the audit verified),
// with Pearson's chi-square goodness-of-fit test at level alpha = 1e-6 per
// case (about 30 cases: family-wise error probability < 1e-4 for a correct
// sampler). Seeds are fixed, so the test is deterministic.
func TestSamplerMatchesProbabilities(t *testing.T) {
	const n = 60000
	const alpha = 1e-6
	var cases []Discrete
	for _, eps0 := range []float64{0.5, 2, 5} {
		rr, _ := NewBinaryRR(eps0, 1)
		krr, _ := NewKRR(eps0, 6)
		ri, _ := NewRInf(eps0, 5, 2)
		r1, _ := NewR1(eps0, 6, 2)
		cases = append(cases, rr, krr, ri, r1)
	}
	src := NewSeededSource(20260101)
	for ci, r := range cases {
		grid := r.InputGrid()
		for gi, x := range grid[:min(len(grid), 3)] {
			p := make([]float64, r.NumOutputs())
			if err := r.OutputProbabilities(x, p); err != nil {
				t.Fatal(err)
			}
			index := map[string]int{}
			for i := range p {
				index[string(r.Output(i))] = i
			}
			counts := make([]float64, len(p))
			for range n {
				rep, err := r.Randomize(x, src)
				if err != nil {
					t.Fatal(err)
				}
				i, ok := index[string(rep)]
				if !ok {
					t.Fatalf("%s: report %x is not a listed output", r.Name(), rep)
				}
				counts[i]++
			}
			var chi2 float64
			df := -1
			for i, pi := range p {
				if pi == 0 {
					if counts[i] > 0 {
						t.Fatalf("%s: impossible output %d drawn", r.Name(), i)
					}
					continue
				}
				e := n * pi
				chi2 += (counts[i] - e) * (counts[i] - e) / e
				df++
			}
			if crit := chiSquareCritical(df, alpha); chi2 > crit {
				t.Errorf("case %d (%s eps0=%g) input %d: chi2 = %.1f > %.1f (df %d)", ci, r.Name(), r.Eps0(), gi, chi2, crit, df)
			}
		}
	}
}

// TestOutputProbabilitiesGolden compares the realised output probabilities
// of R_inf and R_1 with the paper's formulas evaluated by mpmath
// (testdata/gen_golden.py): they may differ only by the 2^-64 rounding of
// the thresholds (plus the float64 rounding of the probabilities).
func TestOutputProbabilitiesGolden(t *testing.T) {
	var g struct {
		Cases []struct {
			Name   string    `json:"name"`
			Eps0   float64   `json:"eps0"`
			Radius float64   `json:"radius"`
			X      []float64 `json:"x"`
			P      []float64 `json:"p"`
		} `json:"output_probabilities"`
	}
	loadJSON(t, "testdata/golden.json", &g)
	if len(g.Cases) == 0 {
		t.Fatal("no golden cases")
	}
	for _, c := range g.Cases {
		r, err := New(c.Name, Config{Eps0: c.Eps0, Dim: len(c.X), Radius: c.Radius})
		if err != nil {
			t.Fatal(err)
		}
		d := r.(Discrete)
		p := make([]float64, d.NumOutputs())
		if err := d.OutputProbabilities(c.X, p); err != nil {
			t.Fatal(err)
		}
		if len(p) != len(c.P) {
			t.Fatalf("%s: %d outputs, golden has %d", c.Name, len(p), len(c.P))
		}
		for i := range p {
			if math.Abs(p[i]-c.P[i]) > 0x1p-62+1e-15*c.P[i] {
				t.Errorf("%s eps0=%g x=%v: P[output %d] = %.17g, want %.17g", c.Name, c.Eps0, c.X, i, p[i], c.P[i])
			}
		}
	}
}

// TestConcurrentRandomize runs one randomizer from several goroutines, each
// with its own source (run with -race to check for shared state).
func TestConcurrentRandomize(t *testing.T) {
	for _, r := range allRandomizers(t, 16) {
		x := make([]float64, r.Dim())
		x[0] = 0.5
		if r.Name() == "rr" || r.Name() == "krr" {
			x[0] = 1 // categorical inputs
		}
		done := make(chan error, 4)
		for g := range 4 {
			go func() {
				src := NewSeededSource(uint64(g))
				sum := make([]float64, r.Dim())
				for range 200 {
					rep, err := r.Randomize(x, src)
					if err == nil {
						err = r.AddDecoded(rep, 1, sum)
					}
					if err != nil {
						done <- err
						return
					}
				}
				done <- nil
			}()
		}
		for range 4 {
			if err := <-done; err != nil {
				t.Errorf("%s: %v", r.Name(), err)
			}
		}
	}
}
