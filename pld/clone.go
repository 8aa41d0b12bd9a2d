package pld

import (
	"fmt"
	"math"

	"github.com/shuffledp/shuffledp/internal/logmath"
)

// cloneAtom is an atom of the clone pair (P_g, Q_c) with likelihood ratio
// L = P_g/Q_c > 1: Q_c-mass e^logQ at privacy loss l = log L.
type cloneAtom struct {
	logQ, l float64
}

// clonePositive enumerates the atoms with L > 1 of the clone pair of the
// subsampled shuffle (docs/proofs/clones-rdp.md, Steps 1-2): with
// p = e^-eps0, alpha = e^eps0/(e^eps0+1), g = k/n, clone count
// C ~ Bin(k-1, p) and, given C = c, the first coordinate x in 0..c+1,
//
//	Q_c(c,x) = alpha b(x) + (1-alpha) b(x-1),  b the Bin(c, 1/2) pmf,
//	P_c(c,x) = Q_c(c, c+1-x),  P_g = (1-g) Q_c + g P_c,
//	L - 1 = g (1 - e^-eps0)(2x-c-1)/((c+1-x) + x e^-eps0)   (> 0 iff 2x > c+1).
//
// It returns two lists. hi over-approximates the positive part: every
// atom's Q-mass and loss rounded up, clone counts grouped into blocks
// charged at their smallest count, and every mass cut off charged as one
// atom at the largest loss log(1 + g(e^eps0 - 1)); so for every b >= 1,
// sum_hi q (L - b)_+ >= H_b(P_g||Q_c). lo under-approximates it (masses
// and losses rounded down, blocks charged at their largest count, cut
// mass dropped): sum_lo q (L - b)_+ <= H_b(P_g||Q_c). The bound at clone
// count c is non-increasing in c (clones-rdp, Step 5: the pair at c+1 is
// the pair at c pushed through a channel), which justifies both block
// charges. cut is the depth, in nats below the largest term, below which
// terms are cut.
func clonePositive(n, k int64, eps0, cut float64) (hi, lo []cloneAtom, lossMaxHi float64) {
	g := float64(k) / float64(n)
	em := math.Exp(-eps0)
	gom := g * -math.Expm1(-eps0)
	logAlpha := -logmath.Log1pExp(-eps0)
	log1mAlpha := -logmath.Log1pExp(eps0)
	var lossMax float64
	if eps0 < 30 {
		lossMax = math.Log1p(g * math.Expm1(eps0))
	} else {
		lossMax = logmath.Log1pExp(logmath.Log(g) + eps0 + math.Log1p(-math.Exp(-eps0)))
	}
	lossMaxHi = lossMax * (1 + (16+eps0-logmath.Log(g))*ulp)
	ymax := g * math.Expm1(eps0)

	m := float64(k - 1)
	logP, log1mP := -eps0, logmath.Log1mExp(-eps0)
	logW := func(c float64) float64 {
		return logmath.LogBinom(m, c) + c*logP + (m-c)*log1mP
	}
	// Relative error of exp(logW): LogBinom is accurate to a few ulps of
	// its magnitude, the products to an ulp each.
	wErr := func(c float64) float64 {
		return 8 * ulp * (math.Abs(logmath.LogBinom(m, c)) + c*math.Abs(logP) + (m-c)*math.Abs(log1mP) + 4)
	}
	mode := math.Min(m, math.Floor((m+1)*em))
	top := logW(mode)
	// Kept counts: logW >= top - cut; logW is unimodal.
	cLo, cHi := mode, mode
	for cLo > 0 && logW(cLo-1) >= top-cut {
		cLo--
	}
	for cHi < m && logW(cHi+1) >= top-cut {
		cHi++
	}
	// Mass of the counts outside [cLo, cHi]: geometric bounds (the pmf
	// ratios are monotone).
	tailW := math.Inf(-1)
	if cLo > 0 {
		r := cLo / (m - cLo + 1) * math.Exp(log1mP-logP) // w(c-1)/w(c) for c <= cLo
		tailW = logmath.LogAddExp(tailW, logW(cLo)+logmath.Log(r)-math.Log1p(-r))
	}
	if cHi < m {
		r := (m - cHi) / (cHi + 1) * math.Exp(logP-log1mP)
		tailW = logmath.LogAddExp(tailW, logW(cHi)+logmath.Log(r)-math.Log1p(-r))
	}
	// Every count's positive part is dominated by count 0's, whose only
	// atom with L > 1 is x = 1: Q-mass 1-alpha at the largest loss.
	tailHi := logmath.NewAccumulator()
	tailHi.Add(tailW + log1mAlpha)

	count := int(cHi-cLo) + 1
	// Blocks of about blockRel of the mode's count each (the loss scale
	// varies as 1/sqrt(c), so the two charges differ by about blockRel/2
	// relative), and at most maxCloneBlocks.
	blocks := min(count, max(minCloneBlocks, int(float64(count)/math.Max(1, blockRel*mode))), maxCloneBlocks)
	// Block weights (sum of w over the block), with their relative error.
	// Positions per count: about 2 * 12 sqrt(c) above the middle.
	est := blocks * 2 * int(12*math.Sqrt(cHi+1)+8)
	hi = make([]cloneAtom, 0, est)
	lo = make([]cloneAtom, 0, est)
	for i := 0; i < blocks; i++ {
		s, e := cLo+float64(i*count/blocks), cLo+float64((i+1)*count/blocks)-1
		acc := logmath.NewAccumulator()
		errB := 0.0
		for c := s; c <= e; c++ {
			acc.Add(logW(c))
			errB = math.Max(errB, wErr(c))
		}
		logBlock := acc.Value()
		errB += float64(e-s+2) * ulp
		sides := []int{0, 1}
		if s == e {
			sides = []int{2} // one count: both lists from one enumeration
		}
		for _, side := range sides {
			c := s // hi: smallest count of the block
			if side == 1 {
				c = e // lo: largest count
			}
			// b(x0-1) with x0 = floor((c+1)/2) + 1 the first x with 2x > c+1.
			x0 := math.Floor((c+1)/2) + 1
			lb := logmath.LogBinom(c, x0-1) - c*math.Ln2
			lbMag := math.Abs(logmath.LogBinom(c, x0-1)) + c*math.Ln2 + 2
			lbErr := 8*ulp*lbMag + errB
			// Logs of b(x-1) and b(x); b(x+1)/b(x) = (c-x)/(x+1), each
			// step adding at most 3 ulps of the running magnitude.
			bPrev := lb
			bCur := lb + math.Log((c-x0+1)/x0)
			for x := x0; x <= c+1; x++ {
				// Q(x) = alpha b(x) + (1-alpha) b(x-1), in logs.
				lq := logBlock + logmath.LogAddExp(logAlpha+bCur, log1mAlpha+bPrev)
				if lq < -cut-40 && x > x0 {
					// Remaining positions: sum_{j >= x-1} b(j) <= b(x-1)/(1-r),
					// r = (c-x+1)/x = b(x)/b(x-1), decreasing in x.
					r := (c - x + 1) / x
					if side != 1 {
						tailHi.Add(logBlock + bPrev + 4*ulp*(lbMag+(x-x0+2)*(finiteAbs(bPrev)+4)) - math.Log1p(-r))
					}
					break
				}
				y := gom * (2*x - c - 1) / ((c + 1 - x) + x*em)
				steps := x - x0 + 2
				// LogBinom and the recurrence, the log-add, the exp.
				qErr := lbErr + 4*ulp*steps*(lbMag+finiteAbs(bCur)+finiteAbs(bPrev)+8) + 8*ulp*(finiteAbs(lq)+4)
				if side != 1 {
					yh := math.Min(ymax, y*(1+16*ulp))
					l := math.Min(lossMaxHi, math.Log1p(yh)*(1+4*ulp))
					hi = append(hi, cloneAtom{logQ: lq + qErr, l: l})
				}
				if side != 0 {
					l := math.Log1p(y*(1-16*ulp)) * (1 - 4*ulp)
					lo = append(lo, cloneAtom{logQ: lq - qErr, l: l})
				}
				bPrev = bCur
				if x+1 <= c {
					bCur += math.Log((c - x) / (x + 1))
				} else {
					bCur = math.Inf(-1)
				}
			}
		}
	}
	if t := tailHi.Value(); !math.IsInf(t, -1) {
		hi = append(hi, cloneAtom{logQ: t + 4*ulp*math.Abs(t), l: lossMaxHi})
	}
	return hi, lo, lossMaxHi
}

// Clone-count blocks (each enumerated twice, at its smallest and at its
// largest count).
const (
	minCloneBlocks = 256
	maxCloneBlocks = 4096
	blockRel       = 1e-4
)

// defaultCloneCut is the cut depth in nats (e^-80 ~ 1.8e-35).
const defaultCloneCut = 80

// symmetricFromPositive builds the symmetric pair (Zhu, Dong & Wang 2022):
// every positive atom (Q-mass q, loss l > 0) becomes P-mass q e^l at loss
// l and P-mass q at loss -l, and the rest of the mass sits at loss 0. Its
// PLD is the law of the loss under either distribution (the pair is
// symmetric), and for b >= 1 its hockey-stick divergence in both
// directions is sum q (e^l - b)_+. If the positive part needs more than
// the whole mass (only through round-off on the pessimistic side), part
// of the largest atom is converted into mass at +inf in both directions,
// which keeps both hockey-stick curves at least as large
// (docs/proofs/pld.md). reserved is mass already placed at +inf in both
// directions.
func symmetricFromPositive(b *builder, atoms []cloneAtom, reserved float64) {
	// Sum the mass used by the atoms, q (1 + e^l), rounded both ways.
	used := 0.0
	big, bigIdx := math.Inf(-1), -1
	for i, a := range atoms {
		used += math.Exp(a.logQ) + math.Exp(a.logQ+a.l)
		if a.l > big {
			big, bigIdx = a.l, i
		}
	}
	e := float64(2*len(atoms)+8) * ulp
	usedLo, usedHi := used*(1-e), used*(1+e)
	// The rest of the mass sits at loss 0. Pessimistic: rounded up (extra
	// mass only raises every Delta); optimistic: rounded down (dropping
	// mass only lowers them).
	var rest float64
	if b.side == Pessimistic {
		rest = 1 - reserved - usedLo
	} else {
		rest = 1 - reserved - usedHi
	}
	reduced := math.NaN() // the largest atom's log-mass after a conversion
	if deficit := usedHi + reserved - 1; deficit > 0 && b.side == Pessimistic && bigIdx >= 0 {
		// Convert u = deficit/2 (rounded up) of the largest atom's
		// Q-mass: it frees 2u of mass and adds u (L - 1) at +inf.
		u := deficit / 2 * (1 + 1e-6)
		a := atoms[bigIdx]
		q := math.Exp(a.logQ)
		u = math.Min(u, q)
		reduced = logmath.Log(q - u)
		b.add(math.Inf(1), u*math.Expm1(a.l)*(1+4*ulp))
		rest += 2 * u
	}
	rest = math.Max(rest, 0)
	for i, a := range atoms {
		lq := a.logQ
		if i == bigIdx && !math.IsNaN(reduced) {
			lq = reduced
		}
		b.add(a.l, math.Exp(lq+a.l))
		b.add(-a.l, math.Exp(lq))
	}
	b.add(0, rest)
}

// checkClone validates the subsampled-shuffle parameters.
func checkClone(n, k int64, eps0 float64) error {
	switch {
	case n < 1:
		return fmt.Errorf("pld: n = %d, want n >= 1", n)
	case k < 1 || k > n:
		return fmt.Errorf("pld: k = %d, want 1 <= k <= n = %d", k, n)
	case !(eps0 >= 0) || eps0 > maxEps0:
		return fmt.Errorf("pld: eps0 = %v, want 0 <= eps0 <= %v", eps0, maxEps0)
	}
	return nil
}

// maxEps0: above it the PLD grid would need (largest loss)/h points for a
// loss range no accountant needs; use the RDP route.
const maxEps0 = 50

// zeroBracket is the PLD of a mechanism that reveals nothing: all mass at
// loss 0.
func zeroBracket(h float64) Bracket {
	return Bracket{
		Pess: &PLD{side: Pessimistic, h: h, mass: []float64{1}},
		Opt:  &PLD{side: Optimistic, h: h, mass: []float64{1}},
	}
}

// finiteAbs returns |x| for finite x and 0 otherwise (error magnitudes of
// log-masses that may be -inf).
func finiteAbs(x float64) float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return 0
	}
	return math.Abs(x)
}
