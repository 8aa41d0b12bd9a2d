package randomizer

import (
	"encoding/json"
	"math"
	"math/big"
	"os"
	"strconv"
	"testing"
)

type golden struct {
	Thresholds []struct {
		Eps0 float64 `json:"eps0"`
		M    int     `json:"m"`
		T    string  `json:"t"`
	} `json:"thresholds"`
	R2Radius []struct {
		Eps0 float64 `json:"eps0"`
		D    int     `json:"d"`
		M    float64 `json:"M"`
	} `json:"r2_radius"`
}

func loadGolden(t *testing.T) golden {
	t.Helper()
	var g golden
	loadJSON(t, "testdata/golden.json", &g)
	return g
}

func loadJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

// TestThresholdGolden compares Threshold with floor(2^64 e^eps0/(e^eps0+m))
// computed by mpmath at 80 digits (testdata/gen_golden.py).
func TestThresholdGolden(t *testing.T) {
	g := loadGolden(t)
	if len(g.Thresholds) == 0 {
		t.Fatal("no golden thresholds")
	}
	for _, c := range g.Thresholds {
		want, err := strconv.ParseUint(c.T, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		if got := Threshold(c.Eps0, c.M); got != want {
			t.Errorf("Threshold(%g, %d) = %d, want %d (diff %d)", c.Eps0, c.M, got, want, int64(got-want))
		}
	}
}

// TestThresholdRatio checks that the realised keep probability never
// exceeds the ideal one, that it is within 2^-64 of it, and that the
// realised ratio t·m/(2^64 − t) is ≤ e^eps0, evaluated in 256-bit floats.
func TestThresholdRatio(t *testing.T) {
	for _, eps0 := range []float64{1e-6, 0.05, 0.3, 1, 2, 2.5, 7, 13, 40} {
		for _, m := range []int{1, 2, 5, 100, 99999} {
			th := Threshold(eps0, m)
			tb := new(big.Float).SetPrec(256).SetUint64(th)
			rest := new(big.Float).SetPrec(256).SetMantExp(big.NewFloat(1), 64)
			rest.Sub(rest, tb)
			ratio := new(big.Float).SetPrec(256).Mul(tb, big.NewFloat(float64(m)))
			ratio.Quo(ratio, rest)
			r, _ := ratio.Float64()
			if lr := math.Log(r); lr > eps0+4e-16 { // float64 log rounding; exactness is checked by FuzzThreshold
				t.Errorf("eps0=%g m=%d: realised log ratio %.17g > eps0", eps0, m, lr)
			}
			ideal := math.Exp(eps0) / (math.Exp(eps0) + float64(m))
			if p := prob(th); math.Abs(p-ideal) > 1e-15*ideal+0x1p-64 {
				t.Errorf("eps0=%g m=%d: realised p %.17g, ideal %.17g", eps0, m, p, ideal)
			}
		}
	}
}

// TestSignCoinBounds checks lo ≤ t(u) ≤ hi, monotonicity and the affine
// form of the realised sign expectation 2t(u)/2^64 − 1 = u·bias.
func TestSignCoinBounds(t *testing.T) {
	for _, eps0 := range []float64{0.1, 1, 4, 30} {
		c := newSignCoin(eps0)
		if c.lo+c.hi != 0 { // lo + hi = 2^64
			t.Fatalf("lo+hi != 2^64")
		}
		prev := uint64(0)
		for i := -1000; i <= 1000; i++ {
			u := float64(i) / 1000
			th := c.threshold(u)
			if th < c.lo || th > c.hi || th < prev {
				t.Fatalf("eps0=%g u=%g: threshold %d outside [%d,%d] or not monotone", eps0, u, th, c.lo, c.hi)
			}
			prev = th
			e := 2*prob(th) - 1
			if math.Abs(e-u*c.bias()) > 1e-15 {
				t.Errorf("eps0=%g u=%g: E[sign] = %.17g, want %.17g", eps0, u, e, u*c.bias())
			}
		}
		if c.threshold(-1) != c.lo || c.threshold(1) != c.hi || c.threshold(-7) != c.lo || c.threshold(3) != c.hi {
			t.Errorf("eps0=%g: endpoints not clamped", eps0)
		}
	}
}

func FuzzThreshold(f *testing.F) {
	for _, s := range []struct {
		e float64
		m int
	}{{1, 1}, {0.001, 3}, {39.9, 1000}} {
		f.Add(s.e, s.m)
	}
	f.Fuzz(func(t *testing.T, eps0 float64, m int) {
		if !(eps0 > 0 && eps0 <= 40) || m < 1 || m > 1<<30 {
			return
		}
		th := Threshold(eps0, m)
		// t·m ≤ e^eps0·(2^64 − t) with e^eps0 rounded up: must hold.
		lhs := new(big.Float).SetPrec(200).SetUint64(th)
		lhs.Mul(lhs, big.NewFloat(float64(m)))
		rest := new(big.Float).SetPrec(200).SetMantExp(big.NewFloat(1), 64)
		rest.Sub(rest, new(big.Float).SetUint64(th))
		up := math.Nextafter(math.Exp(eps0), math.Inf(1))
		up = math.Nextafter(up, math.Inf(1))
		rhs := new(big.Float).SetPrec(200).Mul(rest, big.NewFloat(up))
		if lhs.Cmp(rhs) > 0 {
			t.Fatalf("Threshold(%g,%d)=%d violates the ratio bound", eps0, m, th)
		}
	})
}
