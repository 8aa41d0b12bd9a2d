package pld

import (
	"encoding/json"
	"math"
	"os"
	"strconv"
	"testing"
)

// TestShuffleGaussianPairProfiles: the discretised pairs of the shuffle
// Gaussian mechanisms against the closed-form/mpmath profiles of
// ../route/testdata/shuffle_gaussian_oracle.py: the WOR subsampled pair
// after 1 and 2 rounds (the 2-fold product computed independently of any
// convolution), the check-in slot pair after 1 round. The pessimistic delta
// is never below the exact one and the optimistic never above; the
// pessimistic one is within 1% (plus 1e-9) of it.
func TestShuffleGaussianPairProfiles(t *testing.T) {
	b, err := os.ReadFile("../route/testdata/shuffle_gaussian_golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Profiles []struct {
			Pair   string  `json:"pair"`
			Sigma  float64 `json:"sigma"`
			Rate   float64 `json:"rate"`
			Eps    float64 `json:"eps"`
			Delta1 string  `json:"delta1"`
			Delta2 string  `json:"delta2"`
		} `json:"pair_profiles"`
	}
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Profiles) == 0 {
		t.Fatal("no pair profiles")
	}
	type key struct {
		pair        string
		sigma, rate float64
		steps       int
	}
	composed := map[key]Composed{}
	for _, c := range g.Profiles {
		for steps, s := range map[int]string{1: c.Delta1, 2: c.Delta2} {
			if s == "" {
				continue
			}
			want, _ := strconv.ParseFloat(s, 64)
			k := key{c.Pair, c.Sigma, c.Rate, steps}
			comp, ok := composed[k]
			if !ok {
				var a Accountant
				if c.Pair == "wor" {
					err = a.AddWORGaussian(c.Sigma, c.Rate, steps)
				} else {
					err = a.AddCheckinGaussian(c.Sigma, c.Rate, steps)
				}
				if err != nil {
					t.Fatal(err)
				}
				if comp, err = a.Compose(); err != nil {
					t.Fatal(err)
				}
				composed[k] = comp
			}
			d, err := comp.Delta(c.Eps)
			if err != nil {
				t.Fatal(err)
			}
			// The FFT of the 2-fold composition adds an absolute error
			// (charged to the pessimistic side) of up to ~2e-10 here.
			if !(d.Lower <= want*(1+1e-9)+1e-15 && want <= d.Upper && d.Upper <= want*1.01+1e-9) {
				t.Errorf("%s sigma=%g rate=%g T=%d eps=%g: [%.9g, %.9g], exact %.9g", c.Pair, c.Sigma, c.Rate, steps, c.Eps, d.Lower, d.Upper, want)
			}
		}
	}
}

// TestWORGaussianPairIsValid: the pair's masses: the atom at loss 0 is
// (1-q) erf(1/(2 sqrt 2 sigma)), the total P*-mass of the pessimistic PLD
// is 1 within its error bound, and q = 1 is the Gaussian mechanism.
func TestWORGaussianPairIsValid(t *testing.T) {
	for _, c := range []struct{ sigma, q float64 }{{0.6, 0.00125}, {1, 0.5}, {3, 0.9}} {
		m := &worGaussianMech{sigma: c.sigma, q: c.q, steps: 1}
		pos, neg := m.parts()
		xa, _ := m.xRange()
		_, pa := pos.cdfP(xa)
		_, na := neg.cdfP(xa)
		if got := pa + na + m.zeroMass(); math.Abs(got-1) > 1e-14 {
			t.Errorf("sigma=%g q=%g: parts' mass %.17g, want 1", c.sigma, c.q, got)
		}
		h, err := (&Accountant{events: []mech{m}}).AutoGrid()
		if err != nil {
			t.Fatal(err)
		}
		br, _, err := m.round(h)
		if err != nil {
			t.Fatal(err)
		}
		total := br.Pess.InfMass()
		for _, v := range br.Pess.mass {
			total += v
		}
		if math.Abs(total-1) > 1e-8 {
			t.Errorf("sigma=%g q=%g: pessimistic mass %.12g", c.sigma, c.q, total)
		}
	}
	var a, b Accountant
	if err := a.AddWORGaussian(0.7, 1, 3); err != nil {
		t.Fatal(err)
	}
	if err := b.AddGaussian(0.7, 3); err != nil {
		t.Fatal(err)
	}
	x, _ := a.Epsilon(1e-6)
	y, _ := b.Epsilon(1e-6)
	if x != y {
		t.Errorf("rate 1: %v, the Gaussian mechanism %v", x, y)
	}
	for _, bad := range []struct{ sigma, rate float64 }{{0, 0.5}, {1, 0}, {1, 1.5}, {math.NaN(), 0.5}, {1, math.NaN()}} {
		if a.AddWORGaussian(bad.sigma, bad.rate, 1) == nil || a.AddCheckinGaussian(bad.sigma, bad.rate, 1) == nil {
			t.Errorf("sigma=%v rate=%v accepted", bad.sigma, bad.rate)
		}
	}
}
