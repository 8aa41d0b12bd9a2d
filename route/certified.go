package route

import (
	"errors"
	"fmt"
	"math"

	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/internal/logmath"
	"github.com/shuffledp/shuffledp/pld"
)

// Certified is a certified interval for the epsilon of the composed
// events: Upper is a guarantee (Best's epsilon, won by UpperBound), Lower
// is a true lower bound on the mechanism's worst-case epsilon at the same
// delta: the exact epsilon of a concrete eps0-LDP randomizer on a concrete
// pair of neighbouring datasets (Witness), as computed by the optimistic
// side of the PLD of its exact output distributions. So the mechanism's
// worst case over every eps0-LDP randomizer and every pair of neighbours
// lies in [Lower, Upper]; Ratio = Upper/Lower says how far the accounting
// can still be from the truth.
//
// Unlike the RDP lower bounds (accounting.KindRDPLower), which bound what
// the RDP route can certify, Lower bounds the mechanism itself.
type Certified struct {
	Lower, Upper float64
	Delta        float64
	Ratio        float64 // Upper/Lower; +Inf when Lower is 0
	UpperRoute   string
	UpperBound   string
	Witness      string
	Rounds       int64
}

// Witnesses of Certified.Lower.
const (
	// WitnessBinaryRR: binary randomized response at eps0; every other
	// client holds 0, client 1 holds 0 in D and 1 in D' (NeurIPS'21 Thm 2's
	// configuration), both orders of the pair.
	WitnessBinaryRR = "binary randomized response, others holding 0, client 0 vs 1"
	// WitnessTernaryRR: 3-ary randomized response at eps0 (report the
	// input with probability e^eps0/(e^eps0+2)); every other client holds
	// 2, client 1 holds 0 in D and 1 in D' (a configuration of krr3-lower).
	WitnessTernaryRR = "3-ary randomized response, others holding 2, client 0 vs 1"
)

// Limits of the exact enumeration: the 3-ary histograms are enumerated when
// about certifiedMaxAtoms3 of them lie within certifiedCut nats of the
// mode; outcomes more than certifiedCut nats below the most likely one are
// merged into one outcome.
const (
	certifiedMaxAtoms3 = 4e6
	certifiedCut       = 60
	// certifiedDeltaSlack: the lower end is computed at delta (1 + slack),
	// which can only lower it, to cover the float64 rounding of the exact
	// output distributions (relative errors of order 1e-12 per outcome).
	certifiedDeltaSlack = 1e-6
)

// ErrNoCertifiedLower is wrapped by CertifiedInterval for events other than
// the eps0-LDP shuffle mechanisms.
var ErrNoCertifiedLower = errors.New("a certified lower bound is implemented for the eps0-LDP shuffle mechanisms only (shuffle, subsampled-shuffle)")

// CertifiedInterval returns the certified interval of the composed events
// at delta (Certified). Lower is the larger of the witnesses' exact
// epsilons, each a lower bound: the rounds compose the same randomizer on
// the same pair of neighbouring datasets, so the adversary's view is the
// product of the rounds' exact output distributions, and the optimistic
// PLD (pld.Accountant.AddPMFs, both orders) is never above its epsilon.
//
// The output of a round is the histogram of the k shuffled reports: client
// 1 is among the k sampled without replacement with probability g = k/n,
// and with the others holding one value the histogram's law is
// Mult(k; pi)(h) [(1-g) + g sum_y R(x)_y h_y/(k pi_y)], pi the others'
// report distribution and R(x) client 1's (no cancellation: every term is
// positive). Outcomes more than 60 nats below the most likely one are left
// out (mixPair: a sum of positive parts loses terms, so the epsilon can
// only drop). The 3-ary witness is enumerated when at most about 4e6
// histograms lie within 60 nats of the mode (k q (1-q) k (1-q) below about
// 2e8, q = e^eps0/(e^eps0+2): every setting of docs/accounting-pld.md).
func CertifiedInterval(events []event.Composed, delta float64) (Certified, error) {
	b, err := Best(events, delta, nil)
	if err != nil {
		return Certified{}, err
	}
	c := Certified{Upper: b.Epsilon, Delta: delta, UpperRoute: b.Route, UpperBound: b.Winner, Rounds: b.Rounds}
	if b.Rounds == 0 {
		c.Ratio = 1
		return c, nil
	}
	for _, e := range events {
		if e.Count > 0 && !event.IsLDP(e.Event.Mechanism) {
			return Certified{}, fmt.Errorf("%s: %w", e.Event, ErrNoCertifiedLower)
		}
	}
	for _, w := range []string{WitnessBinaryRR, WitnessTernaryRR} {
		lo, ok, err := witnessEpsilon(events, delta, w)
		if err != nil {
			return Certified{}, fmt.Errorf("certified lower (%s): %w", w, err)
		}
		if ok && lo > c.Lower {
			c.Lower, c.Witness = lo, w
		}
	}
	if c.Lower > c.Upper {
		return Certified{}, fmt.Errorf("internal error: certified lower %.9g above the upper bound %.9g (%s)", c.Lower, c.Upper, c.UpperBound)
	}
	c.Ratio = math.Inf(1)
	if c.Lower > 0 {
		c.Ratio = c.Upper / c.Lower
	}
	return c, nil
}

// witnessEpsilon is the optimistic PLD epsilon of the witness pair composed
// over the events; ok is false when the witness is not enumerated at these
// parameters (3-ary with too many reports).
func witnessEpsilon(events []event.Composed, delta float64, witness string) (float64, bool, error) {
	var a pld.Accountant
	added := 0
	for _, c := range events {
		if c.Count == 0 || c.Event.Eps0 == 0 {
			continue
		}
		if c.Count > math.MaxInt32 {
			return 0, false, fmt.Errorf("--steps %d: too many rounds", c.Count)
		}
		e := c.Event
		k := e.Reports()
		g := float64(k) / float64(e.N)
		var x, y []float64
		switch witness {
		case WitnessBinaryRR:
			x, y = binaryRRPair(k, g, e.Eps0)
		case WitnessTernaryRR:
			if ternaryAtoms(k, e.Eps0) > certifiedMaxAtoms3 {
				return 0, false, nil
			}
			x, y = ternaryRRPair(k, g, e.Eps0)
		}
		if err := a.AddPMFs(x, y, int(c.Count), false); err != nil {
			return 0, false, err
		}
		added++
	}
	if added == 0 {
		return 0, true, nil
	}
	// Only the optimistic side is composed: it is the lower bound, and its
	// truncation drops mass (optimistic by construction), so unlike the
	// pessimistic side it needs no room under delta for truncated mass.
	lo, err := a.EpsilonLower(math.Min(delta*(1+certifiedDeltaSlack), 0.5*(1+delta)))
	if err != nil {
		return 0, false, err
	}
	return math.Max(0, lo), true, nil
}

// mixPair turns log Mult(h) and the factors A(h), B(h) of the two inputs
// into two vectors of outcome probabilities, leaving out the outcomes more
// than certifiedCut nats below the largest (and, for the 3-ary witness,
// those never enumerated). The result is a pair of sub-probability
// vectors: the hockey-stick divergence of the T-fold product is a sum of
// positive parts over outcome sequences, so leaving outcomes out can only
// lower it, and the epsilon computed from it is still a lower bound. (The
// left-out mass is below e^-60 per outcome, far inside the 1e-9 tolerance
// of pld's probability-vector check; merging it into one outcome instead
// would give that outcome float64 noise for masses, possibly an infinite
// privacy loss, which could raise the "lower" end.) Nothing is
// renormalised.
func mixPair(logM, fa, fb []float64) (x, y []float64) {
	top := math.Inf(-1)
	for i, l := range logM {
		top = math.Max(top, l+logmath.Log(math.Max(fa[i], fb[i])))
	}
	for i, l := range logM {
		lx, ly := l+logmath.Log(fa[i]), l+logmath.Log(fb[i])
		if math.Max(lx, ly) < top-certifiedCut {
			continue
		}
		x, y = append(x, math.Exp(lx)), append(y, math.Exp(ly))
	}
	return x, y
}

// binaryRRPair: histogram m = number of 1-reports among k; the others hold
// 0 (report 1 with p = 1/(e^eps0+1)), client 1 holds 0 (x) or 1 (y).
// Mult = Bin(k, p); A(m) = 1 (client 1 reports like the others);
// B(m) = (1-g) + g (p (k-m)/(k (1-p)) + (1-p) m/(k p)).
func binaryRRPair(k int64, g, eps0 float64) (x, y []float64) {
	kf := float64(k)
	logP, log1mP := -logmath.Log1pExp(eps0), -logmath.Log1pExp(-eps0)
	ratio := math.Exp(logP - log1mP) // p/(1-p) = e^-eps0
	logM := make([]float64, k+1)
	fa, fb := make([]float64, k+1), make([]float64, k+1)
	for m := int64(0); m <= k; m++ {
		mf := float64(m)
		logM[m] = logmath.LogBinom(kf, mf) + mf*logP + (kf-mf)*log1mP
		fa[m] = 1
		fb[m] = (1 - g) + g*(ratio*(kf-mf)/kf+mf/(kf*ratio))
	}
	return mixPair(logM, fa, fb)
}

// ternaryRRPair: histogram (n0, n1, n2) of k reports of 3-ary RR
// (report the input with probability q = e^eps0/(e^eps0+2), each other
// value with r = 1/(e^eps0+2)); the others hold 2, client 1 holds 0 (x)
// or 1 (y). Mult(k; r, r, q); A = (1-g) + g (q n0/(k r) + n1/k + r n2/(k q)),
// B the same with n0 and n1 exchanged. Only the histograms within
// certifiedCut nats of the mode are enumerated (the rest merged).
func ternaryRRPair(k int64, g, eps0 float64) (x, y []float64) {
	kf := float64(k)
	logR := -logmath.LogAddExp(eps0, math.Ln2) // log 1/(e^eps0+2)
	logQ := eps0 + logR                        // log e^eps0/(e^eps0+2)
	rq := math.Exp(logR - logQ)                // r/q = e^-eps0
	qr := math.Exp(logQ - logR)                // q/r = e^eps0
	q := math.Exp(logQ)
	// n2 ~ Bin(k, q); given n2, n0 ~ Bin(k - n2, 1/2).
	mode2 := math.Floor((kf + 1) * q)
	if mode2 > kf {
		mode2 = kf
	}
	log2 := func(n2 float64) float64 {
		return logmath.LogBinom(kf, n2) + n2*logQ + (kf-n2)*(logR+math.Ln2)
	}
	top2 := log2(mode2)
	var logM, fa, fb []float64
	for n2 := 0.0; n2 <= kf; n2++ {
		l2 := log2(n2)
		if l2 < top2-certifiedCut-5 {
			if n2 < mode2 {
				n2 = mode2 - (mode2 - n2) // keep scanning up towards the mode
				continue
			}
			break
		}
		rest := kf - n2
		c := math.Floor(rest / 2)
		topC := logmath.LogBinom(rest, c) - rest*math.Ln2
		for dir := -1.0; dir <= 1; dir += 2 {
			start := c
			if dir > 0 {
				start = c + 1
			}
			for n0 := start; n0 >= 0 && n0 <= rest; n0 += dir {
				lc := logmath.LogBinom(rest, n0) - rest*math.Ln2
				if l2+lc < top2+topC-certifiedCut-5 {
					break
				}
				n1 := rest - n0
				logM = append(logM, l2+lc)
				fa = append(fa, (1-g)+g*(qr*n0/kf+n1/kf+rq*n2/kf))
				fb = append(fb, (1-g)+g*(n0/kf+qr*n1/kf+rq*n2/kf))
			}
		}
	}
	return mixPair(logM, fa, fb)
}

// ternaryAtoms estimates the number of 3-ary histograms within
// certifiedCut nats of the mode: the n2 range (Bin(k, q)) times the n0
// range given n2 (Bin(k(1-q), 1/2)), each about 2 sqrt(2 cut variance).
func ternaryAtoms(k int64, eps0 float64) float64 {
	kf := float64(k)
	q := math.Exp(eps0 - logmath.LogAddExp(eps0, math.Ln2))
	w := 2 * float64(certifiedCut+5)
	r2 := 2*math.Sqrt(w*kf*q*(1-q)) + 1
	r0 := 2*math.Sqrt(w*kf*(1-q)/4) + 1
	return r2 * r0
}
