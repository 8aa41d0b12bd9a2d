package approxdp

import (
	"encoding/json"
	"math"
	"os"
	"strconv"
	"testing"
)

// golden mirrors testdata/golden.json, written by testdata/gen_golden.py
// (mpmath, 60 digits, brute-force sums; independent of this package).
type golden struct {
	ClosedForm []struct {
		N     int64   `json:"n"`
		Eps0  float64 `json:"eps0"`
		Delta float64 `json:"delta"`
		Valid bool    `json:"valid"`
		Eps   *string `json:"eps"`
	} `json:"closed_form"`
	ClonesDelta []struct {
		N    int64   `json:"n"`
		Eps0 float64 `json:"eps0"`
		Eps  float64 `json:"eps"`
		PQ   string  `json:"pq"`
		QP   string  `json:"qp"`
	} `json:"clones_delta"`
	ClonesEps []struct {
		N     int64   `json:"n"`
		Eps0  float64 `json:"eps0"`
		Delta float64 `json:"delta"`
		Eps   string  `json:"eps"`
	} `json:"clones_eps"`
	Ullman []struct {
		Eps      float64 `json:"eps"`
		Delta    float64 `json:"delta"`
		Gamma    float64 `json:"gamma"`
		EpsOut   string  `json:"eps_out"`
		DeltaOut string  `json:"delta_out"`
	} `json:"ullman"`
	KOV15 []struct {
		Eps        float64 `json:"eps"`
		T          int64   `json:"T"`
		DeltaTilde float64 `json:"delta_tilde"`
		EpsT       string  `json:"eps_T"`
	} `json:"kov15"`
	ComposeAtSplit []struct {
		EpsS       float64 `json:"eps_s"`
		DeltaS     float64 `json:"delta_s"`
		Gamma      float64 `json:"gamma"`
		T          int64   `json:"T"`
		DeltaTilde float64 `json:"delta_tilde"`
		EpsT       string  `json:"eps_T"`
		DeltaT     string  `json:"delta_T"`
	} `json:"compose_at_split"`
	Pipeline []struct {
		N          int64   `json:"n"`
		K          int64   `json:"k"`
		Eps0       float64 `json:"eps0"`
		T          int64   `json:"T"`
		Delta      float64 `json:"delta"`
		GridMinEps string  `json:"grid_min_eps"`
	} `json:"pipeline"`
}

func loadGolden(t *testing.T) golden {
	t.Helper()
	b, err := os.ReadFile("testdata/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

func num(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// upperOK checks got is a valid upper bound of want, and tight to rel.
func upperOK(t *testing.T, what string, got, want, rel float64) {
	t.Helper()
	if got < want*(1-1e-15) || got > want*(1+rel)+1e-300 {
		t.Errorf("%s = %.17g, oracle %.17g (want oracle <= got <= oracle*(1+%g))", what, got, want, rel)
	}
}

func TestClosedFormGolden(t *testing.T) {
	for _, c := range loadGolden(t).ClosedForm {
		eps, valid, err := ClosedFormEpsilon(c.N, c.Eps0, c.Delta)
		if err != nil {
			t.Fatal(err)
		}
		if valid != c.Valid {
			t.Errorf("n=%d eps0=%g delta=%g: valid=%v, oracle %v", c.N, c.Eps0, c.Delta, valid, c.Valid)
			continue
		}
		if !valid {
			if eps != c.Eps0 {
				t.Errorf("invalid regime must give eps0=%g, got %g", c.Eps0, eps)
			}
			continue
		}
		upperOK(t, "closed form", eps, num(t, *c.Eps), 1e-12)
	}
}

func TestNumericalDeltaGolden(t *testing.T) {
	for _, c := range loadGolden(t).ClonesDelta {
		pq, qp := num(t, c.PQ), num(t, c.QP)
		if math.Abs(pq-qp) > 1e-15*pq {
			t.Errorf("oracle: D(P||Q)=%g != D(Q||P)=%g; the symmetry the code relies on fails", pq, qp)
		}
		iv, err := NumericalDelta(c.N, c.Eps0, c.Eps)
		if err != nil {
			t.Fatal(err)
		}
		if iv.Lower > pq*(1+1e-12) || iv.Upper < pq*(1-1e-15) || iv.Upper > pq*(1+1e-9) {
			t.Errorf("n=%d eps0=%g eps=%g: [%.17g, %.17g] does not tightly contain oracle %.17g",
				c.N, c.Eps0, c.Eps, iv.Lower, iv.Upper, pq)
		}
	}
}

func TestNumericalEpsilonGolden(t *testing.T) {
	for _, c := range loadGolden(t).ClonesEps {
		want := num(t, c.Eps)
		iv, err := NumericalEpsilon(c.N, c.Eps0, c.Delta)
		if err != nil {
			t.Fatal(err)
		}
		if iv.Upper < want*(1-1e-12) || iv.Upper > want*(1+1e-7) {
			t.Errorf("n=%d eps0=%g delta=%g: upper %.12g, oracle %.12g", c.N, c.Eps0, c.Delta, iv.Upper, want)
		}
		if iv.Lower > want*(1+1e-12) {
			t.Errorf("n=%d: lower %.12g above oracle %.12g", c.N, iv.Lower, want)
		}
	}
}

func TestUllmanGolden(t *testing.T) {
	for _, c := range loadGolden(t).Ullman {
		e, d, err := UllmanSubsample(c.Eps, c.Delta, c.Gamma)
		if err != nil {
			t.Fatal(err)
		}
		upperOK(t, "Ullman eps", e, num(t, c.EpsOut), 1e-13)
		upperOK(t, "Ullman delta", d, num(t, c.DeltaOut), 1e-13)
	}
}

func TestKOV15Golden(t *testing.T) {
	for _, c := range loadGolden(t).KOV15 {
		e, err := KOV15Epsilon(c.Eps, c.T, c.DeltaTilde)
		if err != nil {
			t.Fatal(err)
		}
		upperOK(t, "KOV15 eps", e, num(t, c.EpsT), 1e-12)
	}
}

func TestComposeAtSplitGolden(t *testing.T) {
	for _, c := range loadGolden(t).ComposeAtSplit {
		r, err := ComposeAtSplit(c.EpsS, c.DeltaS, c.Gamma, c.T, c.DeltaTilde)
		if err != nil {
			t.Fatal(err)
		}
		upperOK(t, "composed eps", r.Epsilon, num(t, c.EpsT), 1e-12)
		upperOK(t, "composed delta", r.Delta, num(t, c.DeltaT), 1e-10)
	}
}

// The optimised split is at least as good as the oracle's own search (a
// fine grid over delta_shuffle with exact mpmath clones bounds), and not
// implausibly better (the oracle's grid is 10 points per decade).
func TestSubsampledShuffleGolden(t *testing.T) {
	g := loadGolden(t)
	if len(g.Pipeline) == 0 {
		t.Fatal("no pipeline goldens")
	}
	for _, c := range g.Pipeline {
		want := num(t, c.GridMinEps)
		r, err := SubsampledShuffle(c.N, c.K, c.Eps0, c.T, c.Delta, ShuffleBest)
		if err != nil {
			t.Fatal(err)
		}
		if r.Epsilon > want*(1+1e-6) || r.Epsilon < want*(1-2e-3) || r.Delta > c.Delta {
			t.Errorf("n=%d k=%d eps0=%g T=%d: eps %.10g (delta %g), oracle grid minimum %.10g",
				c.N, c.K, c.Eps0, c.T, r.Epsilon, r.Delta, want)
		}
	}
}
