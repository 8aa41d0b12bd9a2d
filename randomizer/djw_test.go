package randomizer

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"sort"
	"testing"

	"gonum.org/v1/gonum/mathext"
)

// TestDJWRadiusGolden compares M with DJW's Gamma-function expression
// evaluated by mpmath (testdata/gen_djw_golden.py), up to d = 100,000.
func TestDJWRadiusGolden(t *testing.T) {
	var g struct {
		Radius []struct {
			Eps0     float64 `json:"eps0"`
			D        int     `json:"d"`
			A        float64 `json:"a"`
			M        float64 `json:"M"`
			AuthorsM float64 `json:"authors_M"`
		} `json:"djw_radius"`
	}
	loadJSON(t, "testdata/djw_golden.json", &g)
	if len(g.Radius) == 0 {
		t.Fatal("no djw goldens")
	}
	for _, c := range g.Radius {
		r, err := NewDJW(c.Eps0, c.D, c.A)
		if err != nil {
			t.Fatal(err)
		}
		if rel := math.Abs(r.OutputRadius()-c.M) / c.M; rel > 1e-12 {
			t.Errorf("eps0=%g d=%d a=%g: M = %.17g, want %.17g (rel %g)", c.Eps0, c.D, c.A, r.OutputRadius(), c.M, rel)
		}
		// The authors' a·c·√(πd/2) is M·(1 + 1/(4d) + O(d^-2)).
		if c.D >= 100 {
			excess := c.AuthorsM/r.OutputRadius() - 1
			if math.Abs(excess-1/(4*float64(c.D))) > 1/float64(c.D*c.D) {
				t.Errorf("d=%d: authors' radius exceeds M by %.3g, want 1/(4d) = %.3g", c.D, excess, 1/(4*float64(c.D)))
			}
		}
	}
}

// TestDJWAuditDensity audits the eps0-LDP ratio and the unbiasedness of
// the closed-form mean exactly (AuditDJW) and checks that the bound is
// attained: the mechanism spends eps0, no more and no less.
func TestDJWAuditDensity(t *testing.T) {
	for _, eps0 := range []float64{0.01, 0.5, 1, 2, 4, 8, 20} {
		for _, d := range []int{1, 2, 3, 7, 100} {
			for _, a := range []float64{1, 0.01, 3.5} {
				r, err := NewDJW(eps0, d, a)
				if err != nil {
					t.Fatal(err)
				}
				res, err := AuditDJW(r)
				if err != nil {
					t.Fatal(err)
				}
				if !res.OK || res.MaxLogRatio > eps0+1e-13 || res.Method != "density" {
					t.Errorf("eps0=%g d=%d a=%g: %+v", eps0, d, a, res)
				}
				if res.MaxLogRatio < eps0*(1-1e-9) || math.Abs(res.MaxLogRatio-r.LogRatioBound()) > 1e-12*math.Max(1, eps0) {
					t.Errorf("eps0=%g d=%d: max log ratio %.17g not tight (bound %.17g)", eps0, d, res.MaxLogRatio, r.LogRatioBound())
				}
				if res.MaxProbSumError > 1e-13 || res.MaxRelBias > 1e-13 {
					t.Errorf("eps0=%g d=%d a=%g: density integral off by %g, relative bias %g", eps0, d, a, res.MaxProbSumError, res.MaxRelBias)
				}
				if b := AuditBound(r); !b.OK {
					t.Errorf("eps0=%g d=%d: AuditBound %+v", eps0, d, b)
				}
			}
		}
	}
}

// TestDJWAuditDetectsViolation makes sure AuditDJW can fail.
func TestDJWAuditDetectsViolation(t *testing.T) {
	r, _ := NewDJW(1, 5, 1)
	r.eps0 = 0.9 // claims 0.9 but draws the hemisphere with the eps0 = 1 coin
	if res, _ := AuditDJW(r); res.OK || math.Abs(res.MaxLogRatio-1) > 1e-12 {
		t.Errorf("audit missed an eps0 violation: %+v", res)
	}
	r, _ = NewDJW(1, 5, 1)
	r.m *= 1.001 // biased decoder
	if res, _ := AuditDJW(r); res.OK || res.MaxRelBias < 1e-4 {
		t.Errorf("audit missed a biased decoder: %+v", res)
	}
}

// bernsteinRadius returns ε such that the mean of n i.i.d. draws with
// variance sigma2 and |X − EX| ≤ b deviates from EX by more than ε with
// probability at most alpha (Bernstein's inequality, two-sided:
// 2·exp(−nε²/(2σ² + 2bε/3)) = alpha).
func bernsteinRadius(n int, sigma2, b, alpha float64) float64 {
	l := math.Log(2 / alpha)
	fn := float64(n)
	B := 2 * b * l / 3
	return (B + math.Sqrt(B*B+8*fn*l*sigma2)) / (2 * fn)
}

// TestDJWUnbiased estimates E[Decode(Randomize(x))] from n seeded draws and
// checks every coordinate against x with Bernstein's inequality at
// alpha = 1e-7 per coordinate, using the exact variance: E[z_i²] = M²/d
// for every input (z_i² has the same law on both hemispheres), so
// Var z_i = M²/d − x_i², and |z_i − x_i| ≤ M + a. It also checks the test
// has power: a decoder 2% too large fails it.
func TestDJWUnbiased(t *testing.T) {
	const n = 200000
	const alpha = 1e-7
	src := NewSeededSource(17)
	for _, tc := range []struct {
		eps0, a float64
		x       []float64
		power   bool
	}{
		{1, 1, []float64{0.5, -0.3, 0.1, 0.6}, false},
		{3, 1, []float64{0, 0, 0}, false},
		{0.5, 2, []float64{2, 0}, false}, // on the sphere
		{2, 1, []float64{-0.7}, false},
		{4, 1, []float64{1, 0, 0}, true},
		{1.5, 0.5, func() []float64 {
			x := make([]float64, 40)
			for i := range x {
				x[i] = 0.07 * math.Sin(float64(i))
			}
			return x
		}(), false},
	} {
		d := len(tc.x)
		r, err := NewDJW(tc.eps0, d, tc.a)
		if err != nil {
			t.Fatal(err)
		}
		M := r.OutputRadius()
		sum := make([]float64, d)
		for range n {
			rep, err := r.Randomize(tc.x, src)
			if err != nil {
				t.Fatal(err)
			}
			if err := r.AddDecoded(rep, 1, sum); err != nil {
				t.Fatal(err)
			}
		}
		for i, s := range sum {
			mean := s / n
			eps := bernsteinRadius(n, M*M/float64(d)-tc.x[i]*tc.x[i], M+tc.a, alpha)
			if math.Abs(mean-tc.x[i]) > eps {
				t.Errorf("eps0=%g x=%v coord %d: mean %.5f, want %.5f ± %.5f", tc.eps0, tc.x, i, mean, tc.x[i], eps)
			}
			if tc.power && tc.x[i] != 0 && math.Abs(1.02*mean-tc.x[i]) <= eps {
				t.Errorf("eps0=%g coord %d: a 2%% bias (%.5f) would pass the ±%.5f bound: no power", tc.eps0, i, 1.02*mean, eps)
			}
		}
	}
}

// TestDJWSamplerMatchesDensity checks that the sampler draws from the
// density the audit verified: the law of t = <v, x/||x||> (v the reported
// direction) is the uniform sphere's, I_{(1+t)/2}((d−1)/2, (d−1)/2),
// reweighted by DensityAt's factors on the two hemispheres. Kolmogorov–
// Smirnov distance against that CDF, bounded by the Dvoretzky–Kiefer–
// Wolfowitz inequality at alpha = 1e-6 per case (a finite-sample bound).
func TestDJWSamplerMatchesDensity(t *testing.T) {
	const n = 40000
	const alpha = 1e-6
	crit := math.Sqrt(math.Log(2/alpha) / (2 * n))
	src := NewSeededSource(4242)
	for _, d := range []int{2, 3, 10} {
		for _, eps0 := range []float64{0.5, 2} {
			r, _ := NewDJW(eps0, d, 1)
			for _, rho := range []float64{1, 0.5, 0} {
				x := make([]float64, d)
				x[0], x[d-1] = 0.6, 0.8 // unit direction
				for i := range x {
					x[i] *= rho
				}
				e := []float64{0.6, 0.8}
				if d > 2 {
					e = make([]float64, d)
					e[0], e[d-1] = 0.6, 0.8
				}
				fPlus, fMinus := 1.0, 1.0
				if rho > 0 {
					fPlus, _ = r.DensityAt(x, e)
					neg := make([]float64, d)
					for i := range e {
						neg[i] = -e[i]
					}
					fMinus, _ = r.DensityAt(x, neg)
				}
				h := float64(d-1) / 2
				cdf := func(s float64) float64 {
					fu := mathext.RegIncBeta(h, h, math.Max(0, math.Min(1, (1+s)/2)))
					if s <= 0 {
						return fMinus * fu
					}
					return fMinus/2 + fPlus*(fu-0.5)
				}
				ts := make([]float64, n)
				for k := range ts {
					rep, err := r.Randomize(x, src)
					if err != nil {
						t.Fatal(err)
					}
					v, err := r.Direction(rep)
					if err != nil {
						t.Fatal(err)
					}
					for i := range v {
						ts[k] += v[i] * e[i]
					}
				}
				sort.Float64s(ts)
				var ks float64
				for k, s := range ts {
					f := cdf(s)
					ks = math.Max(ks, math.Max(math.Abs(float64(k+1)/n-f), math.Abs(f-float64(k)/n)))
				}
				if ks > crit {
					t.Errorf("d=%d eps0=%g |x|=%g: KS distance %.4f > %.4f", d, eps0, rho, ks, crit)
				}
			}
		}
	}
}

func TestDJWWireFormat(t *testing.T) {
	r, err := New("djw", Config{Eps0: 1, Dim: 2, Radius: 1})
	if err != nil {
		t.Fatal(err)
	}
	if r.ReportSize() != 9 || r.Name() != "djw" || r.Norm() != NormL2 {
		t.Fatalf("ReportSize %d, Name %q, Norm %v", r.ReportSize(), r.Name(), r.Norm())
	}
	// Header 0x18 (version 1, kind 8), then float32 0.6 and 0.8 little-endian.
	rep := Report{0x18, 0x9a, 0x99, 0x19, 0x3f, 0xcd, 0xcc, 0x4c, 0x3f}
	z, err := r.Decode(rep)
	if err != nil {
		t.Fatal(err)
	}
	M := r.(*DJW).OutputRadius()
	if z[0] != M*float64(float32(0.6)) || z[1] != M*float64(float32(0.8)) {
		t.Errorf("decoded %v, want M·(0.6, 0.8) with M = %g", z, M)
	}
	own, _ := r.Randomize([]float64{0.3, -0.1}, NewSeededSource(1))
	if len(own) != 9 || own[0] != 0x18 {
		t.Errorf("report %x: wrong size or header", []byte(own))
	}
	nan := bytes.Clone(rep)
	binary.LittleEndian.PutUint32(nan[1:], math.Float32bits(float32(math.NaN())))
	far := bytes.Clone(rep)
	binary.LittleEndian.PutUint32(far[1:], math.Float32bits(1.2)) // norm 1.44
	for _, bad := range []Report{rep[:8], append(bytes.Clone(rep), 0), {0x17, 0x9a, 0x99, 0x19, 0x3f, 0xcd, 0xcc, 0x4c, 0x3f}, nan, far} {
		sum := []float64{1, 2}
		if err := r.AddDecoded(bad, 1, sum); !errors.Is(err, ErrMalformed) || sum[0] != 1 || sum[1] != 2 {
			t.Errorf("report %x: err %v, sum %v (want ErrMalformed, sum untouched)", []byte(bad), err, sum)
		}
	}
}

// TestDJWReportsLieOnTheSphere: every decoded report has norm M (up to the
// float32 rounding of the direction).
func TestDJWReportsLieOnTheSphere(t *testing.T) {
	r, _ := NewDJW(1.5, 13706, 0.005)
	src := NewSeededSource(3)
	x := make([]float64, r.Dim())
	x[5] = 0.004
	for range 3 {
		rep, err := r.Randomize(x, src)
		if err != nil {
			t.Fatal(err)
		}
		z, err := r.Decode(rep)
		if err != nil {
			t.Fatal(err)
		}
		if n := l2Norm(z); math.Abs(n/r.OutputRadius()-1) > 1e-6 {
			t.Errorf("decoded norm %.9g, want M = %.9g", n, r.OutputRadius())
		}
	}
}
