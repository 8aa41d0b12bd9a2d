package sampledgauss

import (
	"math"

	"github.com/shuffledp/shuffledp/internal/logmath"
)

// ledger sums signed terms t_i = s_i e^{l_i}, each with a bound rho_i on
// its relative floating-point error, and returns an upper bound on the
// exact sum (upper). It also takes absolute error terms (remainder
// widths, bounds on omitted pieces) through addErr. Running log-space
// sums of the positive and negative parts serve the stopping rules
// (estimate); the final sum is compensated, so that its rounding is a few
// ulps of the result rather than of the terms when they cancel.
type ledger struct {
	terms    []term
	errs     []float64
	pos, neg logmath.Accumulator
	err      logmath.Accumulator
}

func newLedger() ledger {
	return ledger{pos: logmath.NewAccumulator(), neg: logmath.NewAccumulator(), err: logmath.NewAccumulator()}
}

// add records the term sign*e^{logAbs} with relative error at most rho.
func (b *ledger) add(sign, logAbs, rho float64) {
	if math.IsInf(logAbs, -1) {
		return
	}
	b.terms = append(b.terms, term{sign, logAbs, rho})
	if sign > 0 {
		b.pos.Add(logAbs)
	} else {
		b.neg.Add(logAbs)
	}
	b.err.Add(logAbs + logmath.Log(rho))
}

// addErr adds e^{logAbs} to the error budget.
func (b *ledger) addErr(logAbs float64) {
	if math.IsInf(logAbs, -1) {
		return
	}
	b.errs = append(b.errs, logAbs)
	b.err.Add(logAbs)
}

// estimate returns log(P - N) from the running sums (an approximation
// for stopping rules), or -Inf when P <= N.
func (b *ledger) estimate() float64 {
	p, n := b.pos.Value(), b.neg.Value()
	if !(p > n) {
		return math.Inf(-1)
	}
	return logmath.LogSubExp(p, n)
}

// errEstimate returns log of the error budget so far (per-term errors and
// addErr terms).
func (b *ledger) errEstimate() float64 { return b.err.Value() }

// upper returns the log of an upper bound on the exact sum.
//
// With M the largest log term, each term is scaled to x_i = s_i e^{l_i - M};
// l_i - M is rounded by at most eps |l_i - M| (absolute), so x_i carries a
// relative error of at most rho_i + eps (|l_i - M| + 1). The x_i are summed
// with Neumaier's compensated summation, whose error is at most
// 2 eps |S| + 2 n eps^2 sum |x_i| (Higham, Accuracy and Stability of
// Numerical Algorithms, 2nd ed., Sec. 4.3); 4 eps |S| + (2 eps + 4 n eps^2) sum|x_i|
// is used. Terms below e^{-740} relative underflow and are covered by
// (n+1) e^{-740}. The bound is max(S, 0) + sum_i |x_i| rho'_i + errors +
// rounding, times e^M, and the final logarithm is rounded up by a few ulps.
func (b *ledger) upper() float64 {
	m := math.Inf(-1)
	for _, t := range b.terms {
		m = math.Max(m, t.logAbs)
	}
	for _, e := range b.errs {
		m = math.Max(m, e)
	}
	if math.IsInf(m, -1) {
		return m
	}
	var s, c, abs, rel, errs float64
	for _, t := range b.terms {
		d := t.logAbs - m
		x := math.Exp(d)
		abs += x
		rel += x * (t.rho + eps*(math.Abs(d)+1))
		v := math.Copysign(x, t.sign)
		u := s + v
		if math.Abs(s) >= math.Abs(v) {
			c += (s - u) + v
		} else {
			c += (v - u) + s
		}
		s = u
	}
	s += c
	for _, e := range b.errs {
		errs += math.Exp(e - m)
	}
	n := float64(len(b.terms))
	bound := math.Max(s, 0) + rel + errs + 4*eps*math.Abs(s) + (2*eps+4*n*eps*eps)*abs + (n+1)*math.Exp(-740)
	// rel, errs and the rounding terms are themselves sums of positive
	// numbers with relative rounding below n eps; a factor 1 + 8 eps
	// (n + 4) covers them and the final additions.
	bound *= 1 + 8*eps*(n+4)
	v := m + logmath.Log(bound)
	return v + 8*eps*(math.Abs(v)+1)
}

// rho returns the relative error bound for a term whose logarithm is a sum
// of components of total absolute size mag. Each component is within two
// ulps of a quantity of its size (Go's Log, Log1p, Exp, Expm1, Erfc and
// logmath's LogBeta, whose intermediate sizes the magnitudes include), and
// each of at most seven additions adds half an ulp of a partial sum, so
// the logarithm is within 6 eps mag; exp adds one ulp. 32 eps (1 + mag)
// leaves a factor of five.
func rho(mag float64) float64 { return 32 * eps * (1 + mag) }
