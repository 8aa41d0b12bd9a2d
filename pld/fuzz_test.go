package pld

import (
	"math"
	"testing"
)

// exactDelta returns H_{e^eps} of the T-fold products of p and q by
// enumeration.
func exactDelta(p, q []float64, T int, eps float64) float64 {
	pa, pb := []float64{1}, []float64{1}
	for range T {
		var na, nb []float64
		for i := range pa {
			for j := range p {
				na = append(na, pa[i]*p[j])
				nb = append(nb, pb[i]*q[j])
			}
		}
		pa, pb = na, nb
	}
	s := 0.0
	a := math.Exp(eps)
	for i := range pa {
		s += math.Max(0, pa[i]-a*pb[i])
	}
	return s
}

// pmfFromBytes turns bytes into a probability vector (zeros allowed).
func pmfFromBytes(b []byte) []float64 {
	v := make([]float64, len(b))
	s := 0.0
	for i, x := range b {
		v[i] = float64(x)
		s += v[i]
	}
	if s == 0 {
		return nil
	}
	for i := range v {
		v[i] /= s
	}
	return v
}

// FuzzFromPMFs: for random pairs over up to 6 outcomes, the exact
// hockey-stick divergence of the 1-, 2- and 3-fold products lies in the
// bracket of FromPMFs (composed), and so does the symmetric pair's where
// it exists.
func FuzzFromPMFs(f *testing.F) {
	f.Add([]byte{1, 2, 3}, []byte{3, 2, 1}, uint8(2), uint16(300))
	f.Add([]byte{5, 0, 1}, []byte{0, 5, 1}, uint8(1), uint16(50))
	f.Add([]byte{9, 1}, []byte{1, 9}, uint8(3), uint16(1000))
	f.Fuzz(func(t *testing.T, pb, qb []byte, tb uint8, eb uint16) {
		if len(pb) < 2 || len(pb) > 6 || len(qb) != len(pb) {
			return
		}
		p, q := pmfFromBytes(pb), pmfFromBytes(qb)
		if p == nil || q == nil {
			return
		}
		T := int(tb%3) + 1
		eps := float64(eb%2000) / 1000
		b, err := FromPMFs(p, q, 1e-3)
		if err != nil {
			t.Fatal(err)
		}
		c, err := b.SelfCompose(T)
		if err != nil {
			t.Fatal(err)
		}
		iv, err := c.Delta(eps)
		if err != nil {
			t.Fatal(err)
		}
		ex := exactDelta(p, q, T, eps)
		tol := 1e-12 * (1 + ex)
		if iv.Lower > ex+tol || iv.Upper < ex-tol {
			t.Fatalf("p=%v q=%v T=%d eps=%v: exact %.15g outside %v", p, q, T, eps, ex, iv)
		}
		// The symmetric pair, where the positive part fits.
		s, err := Symmetric(p, q, 1e-3)
		if err != nil {
			return
		}
		sc, err := s.SelfCompose(T)
		if err != nil {
			t.Fatal(err)
		}
		// Its curve at b >= 1 is that of (p, q), so at T = 1 and eps >= 0
		// its delta equals (p, q)'s.
		siv, _ := sc.Delta(eps)
		if T == 1 && (siv.Lower > ex+tol || siv.Upper < ex-tol) {
			t.Fatalf("symmetric p=%v q=%v eps=%v: exact %.15g outside %v", p, q, eps, ex, siv)
		}
		// At every T, the exact delta of the T-fold symmetric pair built
		// explicitly lies in the bracket.
		sp, sq := symmetricPMFs(p, q)
		sex := exactDelta(sp, sq, T, eps)
		if siv.Lower > sex+tol || siv.Upper < sex-tol {
			t.Fatalf("symmetric p=%v q=%v T=%d eps=%v: exact %.15g outside %v", p, q, T, eps, sex, siv)
		}
	})
}

// symmetricPMFs builds the symmetric pair explicitly: outcomes o+ (p, q)
// and o- (q, p) for every o with p > q (with q = 0: p at +inf and its
// mirror), and one outcome with the rest in both.
func symmetricPMFs(p, q []float64) (sp, sq []float64) {
	used := 0.0
	for i := range p {
		if p[i] > q[i] {
			sp = append(sp, p[i], q[i])
			sq = append(sq, q[i], p[i])
			used += p[i] + q[i]
		}
	}
	sp = append(sp, math.Max(0, 1-used))
	sq = append(sq, math.Max(0, 1-used))
	return sp, sq
}
