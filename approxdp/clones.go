package approxdp

import (
	"math"

	"github.com/shuffledp/shuffledp/internal/logmath"
)

// Interval is a two-sided numerical result: the true value of the quantity
// (as defined by the analysis that produced it) lies in [Lower, Upper].
type Interval struct {
	Lower, Upper float64
}

// The clones bound of FMT20 (arXiv 2012.12803, Section 3 and Appendix E;
// NeurIPS'21 Fig. 2 curve (iv) uses it). Shuffling n reports of any eps0-LDP
// randomizer on replace-one neighbours D, D' is (eps, delta)-DP whenever the
// pair of distributions over (clone count c, position x)
//
//	C ~ Bin(n-1, e^-eps0),  alpha = e^eps0/(e^eps0+1),
//	P_c = alpha·Bin(c,1/2) + (1-alpha)·(Bin(c,1/2)+1),
//	Q_c = (1-alpha)·Bin(c,1/2) + alpha·(Bin(c,1/2)+1),
//
// satisfies max(D_{e^eps}(P||Q), D_{e^eps}(Q||P)) <= delta, where
// D_{e^eps}(P||Q) = sum_c Pr[C=c] sum_x max(0, P_c(x) - e^eps Q_c(x)) is the
// hockey-stick divergence. Since P_c(x) = Q_c(c+1-x), both directions are
// equal for every c, so one is computed.
//
// Per clone count c the divergence is B(c) = sum_{x <= x*} t(x) with
// t(x) = a1 b(x) - a2 b(x-1), b = the Bin(c,1/2) pmf,
// a1 = (e^eps0 - e^eps)/(e^eps0+1), a2 = (e^(eps+eps0) - 1)/(e^eps0+1),
// and x* the largest x with x/(c+1-x) < R = a1/a2 (the terms are positive
// exactly there). We sum the positive terms directly, downward from x*, with
// b(x*) from logmath.LogBinom and ratios b(x-1)/b(x) = x/(c-x+1): no
// difference of CDFs, no cancellation, no overflow at n = 1e9. The sum is
// cut when the remaining terms are below 1e-17 of it, and the cut-off tail
// is bounded by a geometric series and added to the upper result.
//
// The reference implementation groups clone counts into blocks and, in its
// upper-bound mode, takes max(deltaq_upperc, deltaq_upperc) for one
// direction, omitting the block's lower endpoint (where the divergence is
// largest). Here every clone count is evaluated exactly (up to
// maxExactClones of them; beyond, blocks whose endpoints are chosen by the
// monotonicity of B, see cloneMixture), and the only other approximations
// are the truncations above, each counted conservatively in Upper and
// dropped from Lower.

// cloneTerms holds the eps-dependent constants of the per-c divergence.
type cloneTerms struct {
	logA2 float64 // log a2
	r     float64 // R = a1/a2, in (0, 1) for 0 <= eps < eps0
	frac  float64 // R/(1+R): x* = ceil(frac·(c+1)) - 1
}

func newCloneTerms(eps0, eps float64) cloneTerms {
	logA1 := logmath.Log1mExp(eps-eps0) - logmath.Log1pExp(-eps0)
	s := eps + eps0
	logA2 := s + logmath.Log1mExp(-s) - logmath.Log1pExp(eps0)
	r := math.Exp(logA1 - logA2)
	return cloneTerms{logA2: logA2, r: r, frac: r / (1 + r)}
}

// logDivergence returns log lower and log upper bounds on
// B(c) = D_{e^eps}(P_c || Q_c) for one clone count c.
func (t cloneTerms) logDivergence(c int64) (lo, hi float64) {
	cf := float64(c)
	xs := math.Ceil(t.frac*(cf+1)) - 1
	if xs < 0 {
		xs = 0
	}
	if xs > cf {
		xs = cf
	}
	logBxs := logmath.LogBinom(cf, xs) - cf*math.Ln2
	// S = sum_{x <= xs} (b(x)/b(xs)) * (R - x/(c-x+1)); B = a2 b(xs) S.
	s := 0.0
	rho := 1.0
	x := xs
	for ; x >= 0; x-- {
		ratio := x / (cf - x + 1) // b(x-1)/b(x)
		if term := t.r - ratio; term > 0 {
			s += rho * term
		}
		rho *= ratio
		if rho*t.r <= 1e-17*s {
			x--
			break
		}
	}
	rem := 0.0
	if x >= 0 && rho > 0 {
		// Terms below x are at most R·b(j)/b(xs); b(j-1)/b(j) <= q for j <= x.
		q := x / (cf - x + 1)
		rem = t.r * rho / (1 - q)
	}
	base := t.logA2 + logBxs
	if s <= 0 {
		return math.Inf(-1), base + logmath.Log(rem)
	}
	return base + logmath.Log(s), base + logmath.Log(s+rem)
}

// maxExactClones is the number of clone counts above which the mixture is
// grouped into blocks (see cloneMixture).
const maxExactClones = 4096

// cloneMixture holds the Bin(n-1, e^-eps0) distribution of the clone count
// over the range [cLo, cHi] that carries all but a negligible mass, grouped
// into blocks [start[i], start[i+1]) with their probability mass. When the
// range has at most maxExactClones values every block is one clone count
// and the divergence is exact per c. Otherwise there are maxExactClones
// blocks, and monotonicity makes the grouping rigorous: B(c+1) <= B(c),
// because P_{c+1} and Q_{c+1} are P_c and Q_c pushed through the same
// channel (add an independent fair coin), so the data-processing inequality
// applies. A block's upper contribution uses B at its first clone count and
// its lower contribution B at the next block's first count.
type cloneMixture struct {
	start   []int64   // len(mass)+1 block boundaries
	mass    []float64 // Pr[start[i] <= C < start[i+1]]
	outside float64   // upper bound on Pr[C < cLo] + Pr[C > cHi]
}

// newCloneMixture keeps the clone counts c in [cLo, cHi] such that the mass
// outside is at most tail (bounded by geometric series of the pmf ratios).
func newCloneMixture(n int64, eps0, tail float64) cloneMixture {
	m := float64(n - 1)
	logP := -eps0
	log1mP := logmath.Log1mExp(-eps0)
	logW := func(c float64) float64 {
		return logmath.LogBinom(m, c) + c*logP + (m-c)*log1mP
	}
	if n == 1 {
		return cloneMixture{start: []int64{0, 1}, mass: []float64{1}}
	}
	mode := math.Floor((m + 1) * math.Exp(logP))
	if mode > m {
		mode = m
	}
	half := tail / 2
	// Walk down from the mode. Below c the pmf ratio w(j-1)/w(j) =
	// j(1-p)/((m-j+1)p) is increasing in j, so the mass below c is at most
	// w(c)·q/(1-q) with q the ratio at c.
	lo := mode
	outside := 0.0
	for lo > 0 {
		w := math.Exp(logW(lo))
		q := math.Exp(logmath.Log(lo) + log1mP - logmath.Log(m-lo+1) - logP)
		if q < 1 {
			if below := w * q / (1 - q); below <= half {
				outside += below
				break
			}
		}
		lo--
	}
	hi := mode
	for hi < m {
		w := math.Exp(logW(hi))
		q := math.Exp(logmath.Log(m-hi) + logP - logmath.Log(hi+1) - log1mP)
		if q < 1 {
			if above := w * q / (1 - q); above <= half {
				outside += above
				break
			}
		}
		hi++
	}
	count := int64(hi-lo) + 1
	blocks := count
	if blocks > maxExactClones {
		blocks = maxExactClones
	}
	mx := cloneMixture{start: make([]int64, blocks+1), mass: make([]float64, blocks), outside: outside}
	for i := int64(0); i <= blocks; i++ {
		mx.start[i] = int64(lo) + i*count/blocks
	}
	for i := range mx.mass {
		s := 0.0
		for c := mx.start[i]; c < mx.start[i+1]; c++ {
			s += math.Exp(logW(float64(c)))
		}
		mx.mass[i] = s
	}
	return mx
}

// delta returns lower and upper bounds on the clones hockey-stick divergence
// at eps. When stopAbove > 0 the sum stops as soon as the partial upper sum
// (stopOnLower: the partial lower sum) exceeds stopAbove: the caller then
// only needs to know that the bound is above stopAbove, which the returned
// (partial, hence smaller) value still shows.
func (mx cloneMixture) delta(eps0, eps, stopAbove float64, stopOnLower bool) Interval {
	if eps >= eps0 {
		return Interval{}
	}
	t := newCloneTerms(eps0, eps)
	lo, hi := 0.0, mx.outside
	l, h := t.logDivergence(mx.start[0])
	for i, w := range mx.mass {
		var lNext float64
		if mx.start[i+1]-mx.start[i] == 1 {
			lNext = l // exact: the block is the single clone count start[i]
		} else {
			lNext, _ = t.logDivergence(mx.start[i+1])
		}
		lo += w * math.Exp(lNext)
		hi += w * math.Exp(h)
		if stopAbove > 0 && ((!stopOnLower && hi > stopAbove) || (stopOnLower && lo > stopAbove)) {
			break
		}
		if i+1 < len(mx.mass) {
			l, h = t.logDivergence(mx.start[i+1])
		}
	}
	return Interval{Lower: roundDown(lo, 1e-10), Upper: math.Min(roundUp(hi, 1e-10), 1)}
}

// NumericalDelta returns bounds on the delta that the FMT20 clones analysis
// certifies for shuffling n reports of an eps0-LDP randomizer at a given
// eps: Upper is a valid delta (the shuffle is (eps, Upper)-DP); Lower is a
// lower bound on the clones divergence itself (the analysis cannot certify
// a smaller delta at this eps; it is not a lower bound on the mechanism's
// privacy). Mass of the clone count left out is at most 1e-300 + 1e-12·Upper.
func NumericalDelta(n int64, eps0, eps float64) (Interval, error) {
	if err := checkN("n", n); err != nil {
		return Interval{}, err
	}
	if err := checkEps0(eps0); err != nil {
		return Interval{}, err
	}
	if err := checkEps("eps", eps); err != nil {
		return Interval{}, err
	}
	if eps >= eps0 {
		return Interval{}, nil
	}
	// A first pass with a loose tail finds the scale of delta; the second
	// keeps the left-out mass below 1e-12 of it.
	d := newCloneMixture(n, eps0, 1e-12).delta(eps0, eps, 0, false)
	tail := math.Max(1e-12*d.Lower, 1e-300)
	return newCloneMixture(n, eps0, tail).delta(eps0, eps, 0, false), nil
}

// NumericalEpsilon returns bounds on the smallest eps at which the FMT20
// clones analysis certifies (eps, delta)-DP for shuffling n reports of an
// eps0-LDP randomizer (FMT20 Appendix E; apple/ml-shuffling-amplification).
// Upper is a valid epsilon: the upper delta bound at Upper is <= delta.
// Lower is an epsilon at which even the lower delta bound exceeds delta, so
// the clones analysis cannot certify anything below it. Each end is found
// by a bracketing root search that stops when the bracket is narrower than
// 1e-9 relative (or 1e-12 absolute).
func NumericalEpsilon(n int64, eps0, delta float64) (Interval, error) {
	return numericalEpsilon(n, eps0, delta, true)
}

// NumericalEpsilonUpper is the Upper end of NumericalEpsilon alone, at half
// the cost; the pipeline and the figures use it.
func NumericalEpsilonUpper(n int64, eps0, delta float64) (float64, error) {
	iv, err := numericalEpsilon(n, eps0, delta, false)
	return iv.Upper, err
}

func numericalEpsilon(n int64, eps0, delta float64, withLower bool) (Interval, error) {
	return numericalEpsilonHinted(n, eps0, delta, withLower, 0, math.Inf(1))
}

// numericalEpsilonHinted is numericalEpsilon with a guess of the bracket
// (e.g. the epsilons at neighbouring deltas). The hints only speed up the
// search: each is checked before it is used, so any values give a correct
// result.
func numericalEpsilonHinted(n int64, eps0, delta float64, withLower bool, loHint, hiHint float64) (Interval, error) {
	if err := checkN("n", n); err != nil {
		return Interval{}, err
	}
	if err := checkEps0(eps0); err != nil {
		return Interval{}, err
	}
	if err := checkOpenUnit("delta", delta); err != nil {
		return Interval{}, err
	}
	if eps0 == 0 {
		return Interval{}, nil
	}
	mx := newCloneMixture(n, eps0, 1e-9*delta)
	hi0 := eps0
	if cf, valid, err := ClosedFormEpsilon(n, eps0, delta); err == nil && valid && cf < hi0 {
		hi0 = cf
	}
	if hiHint > 0 && hiHint < hi0 {
		hi0 = hiHint
	}
	upper := solveEps(loHint, hi0, eps0, delta, func(e float64) float64 { return mx.delta(eps0, e, 0, false).Upper })
	iv := Interval{Lower: upper.Lower, Upper: upper.Upper}
	if withLower {
		lower := solveEps(0, upper.Upper, eps0, delta, func(e float64) float64 { return mx.delta(eps0, e, 0, false).Lower })
		iv.Lower = lower.Lower
	}
	if iv.Lower > iv.Upper {
		iv.Lower = iv.Upper
	}
	return iv, nil
}

// solveEps brackets the point where the non-increasing function deltaAt
// crosses target on [0, eps0]: it returns [lo, hi] with deltaAt(lo) > target
// (or lo = 0 when deltaAt(0) <= target) and deltaAt(hi) <= target. hi0 and
// lo0 are starting guesses, verified before use: an infeasible hi0 widens
// the bracket to eps0 (where every bound is 0), a feasible lo0 becomes the
// new hi. It runs the Illinois variant of regula falsi on
// log deltaAt(eps) - log target, falling back to bisection where the log is
// infinite, and stops when hi - lo <= max(1e-12, 1e-9 hi).
func solveEps(lo0, hi0, eps0, target float64, deltaAt func(float64) float64) Interval {
	g := func(e float64) float64 { return logmath.Log(deltaAt(e)) - logmath.Log(target) }
	lo, glo := 0.0, math.Inf(1)
	hi := math.Min(hi0, eps0)
	ghi := g(hi)
	if ghi > 0 {
		lo, glo = hi, ghi
		hi = eps0
		if ghi = g(hi); ghi > 0 {
			return Interval{Lower: eps0, Upper: eps0}
		}
	}
	if lo0 > lo && lo0 < hi {
		if gl := g(lo0); gl > 0 {
			lo, glo = lo0, gl
		} else {
			hi, ghi = lo0, gl
		}
	}
	if lo == 0 {
		if glo = g(0); glo <= 0 {
			return Interval{Lower: 0, Upper: 0}
		}
	}
	side := 0
	for i := 0; i < 300; i++ {
		tol := math.Max(1e-12, 1e-9*hi)
		if hi-lo <= tol {
			break
		}
		var mid float64
		if math.IsInf(ghi, -1) || math.IsInf(glo, 1) || i%8 == 7 {
			mid = lo + (hi-lo)/2
		} else {
			mid = hi - ghi*(hi-lo)/(ghi-glo)
			// Overshoot the estimate by tol/2 towards the end that did not
			// move last, so that the bracket collapses around the root.
			switch side {
			case 1:
				mid -= tol / 2
			case -1:
				mid += tol / 2
			}
			if mid <= lo || mid >= hi || math.IsNaN(mid) {
				mid = lo + (hi-lo)/2
			}
		}
		gm := g(mid)
		if gm <= 0 {
			hi, ghi = mid, gm
			if side == 1 {
				glo /= 2
			}
			side = 1
		} else {
			lo, glo = mid, gm
			if side == -1 {
				ghi /= 2
			}
			side = -1
		}
	}
	return Interval{Lower: lo, Upper: hi}
}
