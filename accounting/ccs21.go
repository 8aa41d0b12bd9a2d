package accounting

import (
	"fmt"
	"math"
	"sync"

	"github.com/shuffledp/shuffledp/internal/logmath"
)

// ShuffleUpper1 is CCS'21 Theorem 3.1 (Girgis, Data, Diggavi, Suresh,
// Kairouz, "On the Rényi differential privacy of the shuffle model", CCS
// 2021, arXiv 2105.05180): the RDP of shuffling the reports of n clients,
// each eps0-LDP. With nbar = floor((n-1)/(2 e^eps0)) + 1, integer lambda >= 2:
//
//	eps(lambda) <= 1/(lambda-1) log( 1 + C(lambda,2) (e^eps0-1)^2/(nbar e^eps0)
//	    + sum_{i=3..lambda} C(lambda,i) i Gamma(i/2) ((e^{2eps0}-1)^2/(2 nbar e^{2eps0}))^{i/2}
//	    + exp(eps0 lambda - (n-1)/(8 e^eps0)) ).
//
// At a non-integer order the bound interpolates (lambda-1) eps(lambda)
// linearly between floor(lambda) and ceil(lambda) (and between 1, where it
// is 0, and 2): valid because (lambda-1) D_lambda is convex in lambda for
// every pair of distributions (it is a log moment-generating function), and
// a supremum of convex functions is convex (CCS'21 uses the same argument).
func ShuffleUpper1(n int64, eps0 float64) (RDP, error) {
	if err := validateShuffle(n, n, eps0); err != nil {
		return nil, err
	}
	return &ccs21Upper1{n: n, eps0: eps0}, nil
}

type ccs21Upper1 struct {
	n    int64
	eps0 float64

	mu     sync.Mutex
	table  []float64       // table[j] = eps(j) for j = 2..len-1, filled by prefix
	single map[int]float64 // eps(j) at orders beyond the table, by integer

	wmu sync.Mutex
	w   []float64 // ccs21Weights, grown on demand
}

// weights returns ccs21Weights up to at least lam, cached per curve.
func (b *ccs21Upper1) weights(lam int) []float64 {
	b.wmu.Lock()
	defer b.wmu.Unlock()
	if len(b.w) <= lam {
		b.w = ccs21Weights(b.n, b.eps0, max(lam, 2*len(b.w)))
	}
	return b.w
}

func (b *ccs21Upper1) Name() string { return BoundCCS21Upper1 }

func (b *ccs21Upper1) RDP(order float64) (float64, error) {
	if err := checkOrder(order, false); err != nil {
		return 0, err
	}
	if order > maxIntegerOrder {
		return 0, fmt.Errorf("order %g exceeds %d: %w", order, maxIntegerOrder, ErrOrderUnsupported)
	}
	if order == math.Trunc(order) {
		return finite(b.integer(int(order)), order, b.Name())
	}
	lo := math.Floor(order)
	hi := lo + 1
	var ylo float64 // (lo-1) eps(lo); 0 at lo = 1
	if lo >= 2 {
		ylo = (lo - 1) * b.integer(int(lo))
	}
	yhi := (hi - 1) * b.integer(int(hi))
	y := ylo + (order-lo)*(yhi-ylo)
	return finite(conservative(y/(order-1)), order, b.Name())
}

// integer evaluates the theorem at integer lam >= 2.
func (b *ccs21Upper1) integer(lam int) float64 {
	b.mu.Lock()
	if lam < len(b.table) {
		v := b.table[lam]
		b.mu.Unlock()
		return v
	}
	if v, ok := b.single[lam]; ok {
		b.mu.Unlock()
		return v
	}
	b.mu.Unlock()
	lf := logFactorials(lam)
	v := b.eval(lam, lf, b.weights(lam))
	b.mu.Lock()
	if b.single == nil {
		b.single = map[int]float64{}
	}
	b.single[lam] = v
	b.mu.Unlock()
	return v
}

// ccs21Weights returns w[i] = log(i Gamma(i/2) c^{i/2}) with
// c = (e^{2eps0}-1)^2/(2 nbar e^{2eps0}), for i = 0..lam.
func ccs21Weights(n int64, eps0 float64, lam int) []float64 {
	nbar := math.Floor(float64(n-1)/(2*math.Exp(eps0))) + 1
	logC := 2*logExpm1(2*eps0) - math.Ln2 - logmath.Log(nbar) - 2*eps0
	w := make([]float64, lam+1)
	for i := 3; i <= lam; i++ {
		fi := float64(i)
		w[i] = logmath.Log(fi) + logmath.LogGamma(fi/2) + fi/2*logC
	}
	return w
}

func (b *ccs21Upper1) eval(lam int, lf logFactTable, w []float64) float64 {
	e0 := b.eps0
	if e0 == 0 {
		return 0
	}
	nbar := math.Floor(float64(b.n-1)/(2*math.Exp(e0))) + 1
	logC := 2*logExpm1(2*e0) - math.Ln2 - logmath.Log(nbar) - 2*e0
	fl := float64(lam)
	s := logmath.NewAccumulator()
	s.Add(lf.binom(lam, 2) + 2*logExpm1(e0) - logmath.Log(nbar) - e0)
	s.Add(e0*fl - float64(b.n-1)/(8*math.Exp(e0)))
	// t_{i+1}/t_i = sqrt(c) (lam-i) G(i)/i, G(i) = Gamma((i+1)/2)/Gamma(i/2)
	// <= sqrt(i/2) (Wendel's inequality): at most sqrt(c) (lam-i)/sqrt(2i),
	// decreasing in i.
	term := func(i int) float64 { return lf.binom(lam, i) + w[i] }
	addSeries(&s, 3, lam, term, func(i int) float64 {
		fi := float64(i)
		return geometricTail(term(i), logC/2+logmath.Log(fl-fi)-logmath.Log(2*fi)/2)
	})
	return rdpFromLogSum(s.Value(), fl)
}

// prefix returns eps(j) for every integer j = 0..maxOrder (entries 0 and 1
// unused), computed once and cached: O(maxOrder^2) work in total.
func (b *ccs21Upper1) prefix(maxOrder int) []float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	if maxOrder < len(b.table) {
		return b.table
	}
	lf := logFactorials(maxOrder)
	w := b.weights(maxOrder)
	t := make([]float64, maxOrder+1)
	copy(t, b.table)
	for j := max(2, len(b.table)); j <= maxOrder; j++ {
		t[j] = b.eval(j, lf, w)
	}
	b.table = t
	return t
}

// ShuffleUpper2 is CCS'21 Theorem 3.3, valid for every real lambda > 1:
//
//	eps(lambda) <= 1/(lambda-1) log( exp(lambda^2 (e^eps0-1)^2 / nbar) + exp(eps0 lambda - (n-1)/(8 e^eps0)) ),
//
// nbar = floor((n-1)/(2 e^eps0)) + 1. Simpler and looser than Theorem 3.1
// at small orders.
func ShuffleUpper2(n int64, eps0 float64) (RDP, error) {
	if err := validateShuffle(n, n, eps0); err != nil {
		return nil, err
	}
	return &ccs21Upper2{n: n, eps0: eps0}, nil
}

type ccs21Upper2 struct {
	n    int64
	eps0 float64
}

func (b *ccs21Upper2) Name() string { return BoundCCS21Upper2 }

func (b *ccs21Upper2) RDP(order float64) (float64, error) {
	if err := checkOrder(order, false); err != nil {
		return 0, err
	}
	if b.eps0 == 0 {
		return 0, nil
	}
	e0 := b.eps0
	nbar := math.Floor(float64(b.n-1)/(2*math.Exp(e0))) + 1
	a := order * order * math.Exp(2*logExpm1(e0)) / nbar
	c := e0*order - float64(b.n-1)/(8*math.Exp(e0))
	v := logmath.LogAddExp(a, c) / (order - 1)
	if v < 0 {
		v = 0
	}
	return finite(conservative(v), order, b.Name())
}

// quickUpper is an O(1) upper bound on the RDP at order lam of the same
// mechanism (CCS'21 Theorem 3.3, valid at every real order), used where any
// upper bound will do, e.g. to majorise the negligible tail of WBK19's sum.
func (b *ccs21Upper1) quickUpper(lam float64) float64 {
	v, err := (&ccs21Upper2{n: b.n, eps0: b.eps0}).RDP(lam)
	if err != nil {
		return math.Inf(1)
	}
	return v
}
