package accounting

import (
	"math"
	"sync"

	"github.com/shuffledp/shuffledp/internal/logmath"
)

// ClonesRDP is the clone-pair RDP upper bound of the subsampled shuffle
// model, for every eps0-LDP randomizer (finite or continuous outputs) and
// every real order lambda > 1; k == n is the plain shuffle. The proof is in
// docs/proofs/clones-rdp.md.
//
// Assumption: every sampled client applies the same eps0-LDP randomizer
// (FMT21's theorem allows, more generally, the randomizer of the i-th
// report position after the permutation, chosen adaptively from the
// earlier reports, but never one chosen by the client's identity). With
// per-client randomizers no shuffle bound can hold: a randomizer that tags
// its client's output makes the shuffle reveal that client's eps0-LDP
// report. CLDP-SGD satisfies it: all sampled clients run the same R_p.
//
// At k = 1 the bound is attained only at n = 1 (binary randomized
// response); for n > 1 the brute-force oracle
// (accounting/testdata/bruteforce_shuffle.py) finds it above every
// mechanism by up to 27% at order 1.1, a gap that closes as the order
// grows (1.2e-4 at order 128, 1.6e-7 at order 256). In short, the proof:
//
//  1. Feldman, McMillan, Talwar, "Hiding among the clones" (FOCS'21,
//     arXiv 2012.12803), Thm 3.2 (the clone reduction for adaptive
//     eps0-DP randomizers; see docs/proofs/clones-rdp.md on the number): the shuffle of k reports, one client's
//     input changed, is a common post-processing of the pair
//     C ~ Bin(k-1, e^-eps0), A ~ Bin(C, 1/2), D ~ Bern(e^eps0/(e^eps0+1)),
//     P = (A+D, C-A+1-D), Q = (A+1-D, C-A+D).
//
//  2. Sampling k of n without replacement (g = k/n, substitution
//     neighbours): Balle, Barthe, Gaboardi 2018, Thm 2 (advanced joint
//     convexity) and joint convexity of the hockey-stick divergence give
//     H_a(X||Y) <= H_a(P_g||Q) for a >= 1, P_g = (1-g) Q + g P, in both
//     directions, and H_a(X||Y) <= H_a(Q||P_g) for a < 1.
//
//  3. E_Y[(X/Y)^lambda] = 1 + lambda(lambda-1) (int_1^inf a^(lambda-2) H_a(X||Y) da
//     + int_0^1 a^(lambda-2) (H_a(X||Y) - (1-a)) da) is monotone in the
//     hockey-stick curve; with L = dP_g/dQ this gives
//
//     eps(lambda) <= log(1 + sum_{L(x) > 1} Q(x) (L^lambda - 1)(1 - L^(1-lambda))) / (lambda-1)
//
//     (the summand is L^lambda + L^(1-lambda) - 1 - L, a product of two
//     positive factors that increase with L).
//
// Evaluation: given C = c the likelihood ratio depends on the first
// coordinate x only, L - 1 = g (1 - e^-eps0)(2x-c-1)/((c+1-x) + x e^-eps0),
// so the pair has O(k) atoms of non-negligible mass. The bound at clone
// count c is an f-divergence of (P_g, Q) given c, non-increasing in c (the
// pair at c+1 is the pair at c pushed through one channel, adding a fair
// coin), so clone counts are grouped into blocks charged at their smallest
// count. Atoms are enumerated down to 60 + min(600, 8192 lossMax) nats
// below the modes, lossMax = log(1 + g(e^eps0-1)) the largest loss (the
// atoms beyond 60 + min(600, 512 lossMax) nats, outside the "core", with
// their losses rounded up to the grid below); the mass cut off beyond
// (clone counts below the kept range, positions beyond it) is charged at
// the largest loss (at the smallest clone count for counts below the
// range), with geometric-series bounds on its size, which keeps that charge
// below e^-60 of the kept moment at every order up to 8192 while the cut is
// below its 660-nat cap. Masses are normalised by the kept sum (which can
// only raise them). With many atoms the privacy loss log L is rounded up to
// a geometric grid (L - 1 by a ratio e^(1/4096)); the summand increases
// with L, so this can only raise the bound. Float64 rounding is covered by
// an explicit relative slack. The value is never below the exact
// clone-pair bound.
func ClonesRDP(n, k int64, eps0 float64) (RDP, error) {
	if err := validateShuffle(n, k, eps0); err != nil {
		return nil, err
	}
	return &clonesRDP{n: n, k: k, eps0: eps0}, nil
}

type clonesRDP struct {
	n, k int64
	eps0 float64

	once sync.Once
	pld  clonePLD
}

func (b *clonesRDP) Name() string { return BoundClonesRDP }

// clonePLD is the privacy-loss distribution of (P_g, Q) restricted to the
// atoms with L > 1: masses Q(x) at losses log L(x), both rounded up, and the
// cut-off mass charged at the largest loss.
type clonePLD struct {
	loss    []float64 // log L of each atom, rounded up (> 0)
	mass    []float64 // Q mass of each atom, normalised upward
	lossMax float64   // log(1 + g(e^eps0 - 1)), rounded up
	logTail float64   // log of the mass charged at lossMax (-Inf if none)
	relErr  float64   // relative rounding error bound on every mass
	// bucketed is set when losses were rounded up to the grid; gridded
	// when only the atoms outside the core were (see cloneCoreCut).
	bucketed, gridded bool
}

// cloneCut: terms more than this many nats below the mode of the clone
// count, or of the position given the count, are cut off (and charged at
// the largest loss). The charge of a cut mass e^-cut at the largest loss is
// at most e^(-cut + lambda lossMax) relative to the kept mass, so the cut
// grows with the largest loss: with cloneCutOrder lossMax nats beyond 60 the
// charge stays below e^-60 of the kept mass at every order up to
// cloneCutOrder (8192, twice the largest order of the default grid), until
// the cut reaches 660 nats: every kept mass, down to 30 nats below the cut,
// stays a normal float64 (above e^-708), so its relative rounding error is
// the one the error budget counts.
func cloneCut(lossMax float64) float64 {
	return 60 + math.Min(600, cloneCutOrder*lossMax)
}

// cloneCoreCut delimits the core of the distribution, where the clone
// counts are grouped into maxCloneBlocks blocks and atoms are kept exactly
// (up to maxExactAtoms of them); what lies between the core and the cut is
// enumerated too, but coarsely: clone counts in at most maxCloneTailBlocks
// blocks on each side, atoms rounded up to the loss grid. Its mass is below
// e^-cloneCoreCut, so that coarseness costs nothing measurable, while its
// losses are charged at their own (rounded-up) values rather than at the
// largest loss.
func cloneCoreCut(lossMax float64) float64 {
	return 60 + math.Min(600, 512*lossMax)
}

// cloneCutOrder is the order up to which the cut-off charge is negligible
// (see cloneCut).
const cloneCutOrder = 8192

// Grouping and bucketing sizes.
const (
	maxCloneBlocks     = 1024       // clone-count blocks of the core
	maxCloneTailBlocks = 256        // clone-count blocks on each side beyond the core
	maxExactAtoms      = 1 << 12    // above this, losses are bucketed
	maxCloneEps0       = 500        // above, the clone-count-0 bound is used
	cloneLossGridLn    = 1.0 / 4096 // bucket ratio e^(1/4096) on the loss
	cloneLossRange     = 16.0       // losses below lossMax e^-16 share one bucket
)

func (b *clonesRDP) RDP(order float64) (float64, error) {
	if err := checkOrder(order, false); err != nil {
		return 0, err
	}
	if b.eps0 == 0 {
		return 0, nil
	}
	b.once.Do(func() { b.pld = newClonePLD(b.n, b.k, b.eps0) })
	return finite(b.pld.rdp(order), order, b.Name())
}

const ulp = 0x1p-52

// newClonePLD builds the loss distribution; eps0 > 0.
func newClonePLD(n, k int64, eps0 float64) clonePLD {
	g := float64(k) / float64(n)
	em := math.Exp(-eps0)                 // e^-eps0, the clone probability p
	gom := g * -math.Expm1(-eps0)         // g (1 - e^-eps0)
	logAlpha := -logmath.Log1pExp(-eps0)  // log e^eps0/(e^eps0+1)
	log1mAlpha := -logmath.Log1pExp(eps0) // log 1/(e^eps0+1)
	alpha, oneMinusAlpha := math.Exp(logAlpha), math.Exp(log1mAlpha)

	// Largest loss log(1 + g(e^eps0 - 1)), attained at x = c+1.
	lossMax := logmath.Log1pExp(logmath.Log(g) + logExpm1(eps0))
	if eps0 < 30 {
		lossMax = math.Log1p(g * math.Expm1(eps0))
	}
	lossMax *= 1 + (16+eps0-logmath.Log(g))*ulp
	pld := clonePLD{lossMax: lossMax, logTail: math.Inf(-1)}
	if eps0 > maxCloneEps0 {
		// The bound at clone count 0 dominates every count (see below): one
		// atom, mass 1-alpha at the largest loss.
		pld.logTail = log1mAlpha
		return pld
	}
	ymax := g * math.Expm1(eps0) // L - 1 at x = c+1
	cut := cloneCut(lossMax)
	coreCut := cloneCoreCut(lossMax)
	coreDown, coreUp := -1, -1 // steps from the mode to the core's ends

	// Clone count C ~ Bin(m, p), weights relative to the mode in log space.
	m := float64(k - 1)
	logP, log1mP := -eps0, logmath.Log1mExp(-eps0)
	mode := math.Floor((m + 1) * em)
	if mode > m {
		mode = m
	}
	// log w(c+1) - log w(c) = log((m-c)/(c+1)) + logP - log1mP.
	var down, up []float64
	lw := 0.0
	cLo := mode
	for cLo > 0 {
		next := lw + logmath.Log(cLo/(m-cLo+1)) + log1mP - logP // log w(cLo-1)
		if coreDown < 0 && lw < -coreCut && next < lw {
			coreDown = len(down)
		}
		if lw < -cut && next < lw {
			break
		}
		lw = next
		cLo--
		down = append(down, lw)
	}
	lw = 0
	cHi := mode
	for cHi < m {
		next := lw + logmath.Log((m-cHi)/(cHi+1)) + logP - log1mP
		if coreUp < 0 && lw < -coreCut && next < lw {
			coreUp = len(up)
		}
		if lw < -cut && next < lw {
			break
		}
		lw = next
		cHi++
		up = append(up, lw)
	}
	logW := make([]float64, 0, len(down)+len(up)+1)
	for i := len(down) - 1; i >= 0; i-- {
		logW = append(logW, down[i])
	}
	logW = append(logW, 0)
	logW = append(logW, up...)
	count := len(logW)
	if coreDown < 0 {
		coreDown = len(down)
	}
	if coreUp < 0 {
		coreUp = len(up)
	}
	coreStart, coreEnd := len(down)-coreDown, len(down)+coreUp+1 // core: logW[coreStart:coreEnd]
	// Block boundaries: the core in at most maxCloneBlocks blocks, each side
	// beyond it in at most maxCloneTailBlocks.
	var bounds []int
	split := func(s, e, nb int) {
		if e <= s {
			return
		}
		nb = min(nb, e-s)
		for i := 0; i < nb; i++ {
			bounds = append(bounds, s+i*(e-s)/nb)
		}
	}
	split(0, coreStart, maxCloneTailBlocks)
	firstCore := len(bounds)
	split(coreStart, coreEnd, maxCloneBlocks)
	lastCore := len(bounds) // blocks [firstCore, lastCore) are the core's
	split(coreEnd, count, maxCloneTailBlocks)
	bounds = append(bounds, count)

	// Geometric bounds on the mass outside [cLo, cHi], relative to the mode.
	logLowTail, logHighTail := math.Inf(-1), math.Inf(-1)
	if cLo > 0 {
		q := cLo / (m - cLo + 1) * math.Exp(log1mP-logP) // w(c-1)/w(c) <= q for c <= cLo
		logLowTail = logW[0] + logmath.Log(q) - math.Log1p(-q)
	}
	if cHi < m {
		q := (m - cHi) / (cHi + 1) * math.Exp(logP-log1mP) // w(c+1)/w(c) <= q for c >= cHi
		logHighTail = logW[count-1] + logmath.Log(q) - math.Log1p(-q)
	}
	// Normalising by the kept sum only raises every mass (the true sum is larger).
	zIn := 0.0
	for _, v := range logW {
		zIn += math.Exp(v)
	}
	logZ := logmath.Log(zIn)

	tail := logmath.NewAccumulator()
	// Clone counts below the range: the bound at count c is at most the one
	// at c = 0, whose only atom with L > 1 is x = 1: mass 1-alpha, largest loss.
	tail.Add(logLowTail - logZ + log1mAlpha)

	// Loss grid: y_j = ymax e^(-j/4096), j = 0..nb-1; an atom with
	// L - 1 = y goes to the largest j with y_j >= y (rounded up).
	nb := int(cloneLossRange/cloneLossGridLn) + 1
	gridY := make([]float64, nb)
	for j := range gridY {
		gridY[j] = ymax * math.Exp(-float64(j)*cloneLossGridLn)
	}
	gridY[0] = ymax
	acc := make([]float64, nb)     // every atom
	tailAcc := make([]float64, nb) // the atoms outside the core
	var exactY, exactM []float64
	exact := true
	thr := math.Exp(-cut)
	thrCore := math.Exp(-coreCut)
	xMax := 0.0 // most positions visited at one clone count

	blocks := len(bounds) - 1
	for i := 0; i < blocks; i++ {
		s, e := bounds[i], bounds[i+1]
		inCore := i >= firstCore && i < lastCore
		w := 0.0
		for j := s; j < e; j++ {
			w += math.Exp(logW[j])
		}
		logBlock := logmath.Log(w) - logZ
		if i == blocks-1 {
			logBlock = logmath.LogAddExp(logBlock, logHighTail-logZ)
		}
		// The block is charged at its smallest clone count c.
		c := cLo + float64(s)
		// Positions x > (c+1)/2 of Q = alpha b(x) + (1-alpha) b(x-1), b the
		// Bin(c, 1/2) pmf; b(x+1)/b(x) = (c-x)/(x+1).
		x0 := math.Floor((c+1)/2) + 1
		logBm := logmath.LogBinom(c, x0-1) - c*math.Ln2 // b(x0-1)
		base := logBlock + logBm
		if base < -cut-30 {
			// Negligible block: all of its mass at the largest loss.
			tail.Add(logBlock)
			continue
		}
		scale := math.Exp(base)
		bPrev, bCur := 1.0, math.Exp(logmath.LogBinom(c, x0)-c*math.Ln2-logBm) // relative to b(x0-1)
		for x := x0; x <= c+1; x++ {
			mass := scale * (alpha*bCur + oneMinusAlpha*bPrev)
			if mass < thr && x > x0 {
				// Remaining mass <= sum_{j >= x-1} b(j) <= b(x-1)/(1-r), r =
				// (c-x+1)/x the ratio b(x)/b(x-1), decreasing in x.
				r := (c - x + 1) / x
				tail.Add(base + logmath.Log(bPrev) - math.Log1p(-r))
				break
			}
			xMax = math.Max(xMax, x-x0+1)
			// L - 1 = g (1 - e^-eps0)(2x-c-1)/((c+1-x) + x e^-eps0), rounded up
			// by 16 ulps (its float64 evaluation errs by fewer than 8).
			y := gom * (2*x - c - 1) / ((c + 1 - x) + x*em) * (1 + 16*ulp)
			if !(y <= ymax) { // also catches a zero denominator
				y = ymax
			}
			j := int(logmath.Log(ymax/y) / cloneLossGridLn)
			if j >= nb {
				j = nb - 1
			}
			for j > 0 && gridY[j] < y {
				j--
			}
			acc[j] += mass
			if !inCore || mass < thrCore {
				tailAcc[j] += mass
			} else if exact {
				if len(exactY) < maxExactAtoms {
					exactY, exactM = append(exactY, y), append(exactM, mass)
				} else {
					exact = false
				}
			}
			bPrev, bCur = bCur, bCur*(c-x)/(x+1)
		}
	}
	pld.logTail = tail.Value()
	lossOf := func(y float64) float64 {
		if y >= ymax {
			return lossMax
		}
		return math.Min(lossMax, math.Log1p(y)*(1+4*ulp))
	}
	if exact {
		for i, y := range exactY {
			pld.loss = append(pld.loss, lossOf(y))
			pld.mass = append(pld.mass, exactM[i])
		}
		for j := nb - 1; j >= 0; j-- {
			if tailAcc[j] > 0 {
				pld.loss = append(pld.loss, lossOf(gridY[j]))
				pld.mass = append(pld.mass, tailAcc[j])
				pld.gridded = true
			}
		}
	} else {
		pld.bucketed = true
		for j := nb - 1; j >= 0; j-- {
			if acc[j] > 0 {
				pld.loss = append(pld.loss, lossOf(gridY[j]))
				pld.mass = append(pld.mass, acc[j])
			}
		}
	}
	// Relative error bounds of the masses, as absolute errors of their logs:
	// the log-weight recurrences (a few ulps of each term per step), the
	// normalising sum, LogBinom and c log 2 (a few ulps of magnitudes up to
	// c), the position recurrence (3 ulps per step), the exps, the bucket
	// sums (one ulp per term).
	lwErr := float64(count) * 4 * ulp * (cut + 2*logmath.Log(m+2) + 2*eps0 + 2)
	zErr := 2 * ulp * float64(count)
	bErr := 16*ulp*(cHi+10) + 3*ulp*xMax
	expErr := ulp * (2*cut + 2*logmath.Log(m+2) + 100)
	sumErr := ulp * float64(blocks) * xMax
	pld.relErr = 2 * (lwErr + zErr + bErr + expErr + sumErr)
	return pld
}

// rdp returns log(1 + S)/(order-1), S = sum mass (L^lambda - 1)(1 - L^(1-lambda))
// plus the tail charge, rounded up.
func (p *clonePLD) rdp(order float64) float64 {
	lam := order
	// Relative error of each summand: (1 + lambda*loss) ulps from the
	// exponent's rounding in each factor, a few more for the products, and
	// the summation (naive, positive terms: one ulp per term).
	nAtoms := float64(len(p.loss))
	rel := p.relErr + (nAtoms+16+4*lam*p.lossMax)*ulp
	var logS float64
	if lam*p.lossMax < 600 {
		s := 0.0
		for i, l := range p.loss {
			s += p.mass[i] * math.Expm1(lam*l) * -math.Expm1((1-lam)*l)
		}
		// Products below the smallest normal may have underflowed.
		s += (nAtoms + 1) * 0x1p-1022
		logS = logmath.LogAddExp(logmath.Log(s), p.logTail+logF(lam, p.lossMax))
	} else {
		acc := logmath.NewAccumulator()
		for i, l := range p.loss {
			acc.Add(logmath.Log(p.mass[i]) + logF(lam, l))
		}
		acc.Add(p.logTail + logF(lam, p.lossMax))
		logS = acc.Value()
	}
	logS += math.Log1p(rel)
	return conservative(logmath.Log1pExp(logS) / (lam - 1))
}

// logF returns log((e^(lam l) - 1)(1 - e^((1-lam) l))) for l > 0, lam > 1.
func logF(lam, l float64) float64 {
	return logExpm1(lam*l) + logmath.Log1mExp((1-lam)*l)
}
