package accounting

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"sync"

	"github.com/shuffledp/shuffledp/internal/logmath"
)

// SubsampledWBK19 is the generic RDP bound for subsampling without
// replacement of Wang, Balle, Kasiviswanathan, "Subsampled Rényi
// differential privacy and analytical moments accountant" (AISTATS 2019),
// Theorem 9. If the base mechanism is (j, eps(j))-RDP for every integer
// j >= 2 and epsInf-DP, running it on a subsample of ratio gamma
// (replace-one neighbours) satisfies, for integer lambda >= 2,
//
//	eps'(lambda) <= 1/(lambda-1) log( 1 + gamma^2 C(lambda,2) min{4(e^{eps(2)}-1), e^{eps(2)} min{2,(e^{epsInf}-1)^2}}
//	    + sum_{j=3..lambda} gamma^j C(lambda,j) e^{(j-1) eps(j)} min{2, (e^{epsInf}-1)^j} ).
//
// The base curve must support every integer order up to the largest order
// asked for. For a shuffled eps0-LDP randomizer epsInf = eps0.
func SubsampledWBK19(base RDP, epsInf, gamma float64) (RDP, error) {
	if base == nil {
		return nil, fmt.Errorf("base curve must not be nil")
	}
	if math.IsNaN(epsInf) || epsInf < 0 {
		return nil, fmt.Errorf("epsInf must be >= 0, got %g", epsInf)
	}
	if !(gamma > 0 && gamma <= 1) {
		return nil, fmt.Errorf("gamma must be in (0,1], got %g", gamma)
	}
	return &wbk19{base: base, epsInf: epsInf, gamma: gamma, name: base.Name() + "+wbk19"}, nil
}

// CCS21WBK19 is baseline (iii) of NeurIPS'21 Fig. 2: CCS'21 Theorem 3.1 for
// shuffling k reports (n := k), amplified by subsampling k of n with WBK19
// Theorem 9 (epsInf = eps0).
func CCS21WBK19(n, k int64, eps0 float64) (RDP, error) {
	if err := validateShuffle(n, k, eps0); err != nil {
		return nil, err
	}
	base, _ := ShuffleUpper1(k, eps0)
	w, err := SubsampledWBK19(base, eps0, float64(k)/float64(n))
	if err != nil {
		return nil, err
	}
	w.(*wbk19).name = BoundCCS21WBK19
	return w, nil
}

type wbk19 struct {
	base   RDP
	epsInf float64
	gamma  float64
	name   string

	mu     sync.Mutex
	head   []float64       // base eps(j), j = 0..len-1 (j <= wbk19HeadOrder)
	single map[int]float64 // base eps(j) at single orders beyond the head
}

func (b *wbk19) Name() string { return b.name }

// wbk19HeadOrder is the largest order at which the base curve is evaluated
// at every integer; beyond it only at the sparse orders of wbk19Sparse.
const wbk19HeadOrder = 64

// wbk19Sparse lists the orders beyond wbk19HeadOrder at which the base curve
// is evaluated exactly: steps of about 1/16 (64, 68, 72, ..., 65536).
var wbk19Sparse = func() []int {
	var g []int
	for x := wbk19HeadOrder; x <= maxIntegerOrder; x += max(1, x/16) {
		g = append(g, x)
	}
	return g
}()

// baseExact returns the base curve at integer order j, cached. A vacuous
// (overflowing) base order reads +Inf.
func (b *wbk19) baseExact(j int) (float64, error) {
	b.mu.Lock()
	if j < len(b.head) {
		v := b.head[j]
		b.mu.Unlock()
		return v, nil
	}
	if v, ok := b.single[j]; ok {
		b.mu.Unlock()
		return v, nil
	}
	b.mu.Unlock()
	if j <= wbk19HeadOrder {
		if p, ok := b.base.(interface{ prefix(int) []float64 }); ok {
			t := p.prefix(wbk19HeadOrder)
			b.mu.Lock()
			b.head = t[:wbk19HeadOrder+1]
			b.mu.Unlock()
			return t[j], nil
		}
	}
	v, err := b.base.RDP(float64(j))
	if errors.Is(err, ErrOrderUnsupported) {
		v, err = math.Inf(1), nil
	}
	if err != nil {
		return 0, fmt.Errorf("base curve %s at order %d: %w", b.base.Name(), j, err)
	}
	b.mu.Lock()
	if b.single == nil {
		b.single = map[int]float64{}
	}
	b.single[j] = v
	b.mu.Unlock()
	return v, nil
}

// headTable returns the base curve's values at orders 0..wbk19HeadOrder
// when the base provides them as a prefix table (nil otherwise).
func (b *wbk19) headTable() []float64 {
	b.mu.Lock()
	h := b.head
	b.mu.Unlock()
	if h != nil {
		return h
	}
	if _, ok := b.base.(interface{ prefix(int) []float64 }); ok {
		if _, err := b.baseExact(2); err == nil {
			b.mu.Lock()
			h = b.head
			b.mu.Unlock()
		}
	}
	return h
}

// baseBound returns an upper bound on the base mechanism's RDP at integer
// order j <= lam: exact up to wbk19HeadOrder and at the sparse orders (and
// at lam); in between, the chord of (j-1) eps(j) between the neighbouring
// exact orders, divided by j-1. The chord is an upper bound because
// (j-1) D_j is convex in j for every pair of distributions (a log
// moment-generating function; a supremum of convex functions is convex), so
// it lies below the chord of its own values, which lie below the bound's.
// It is also capped by the pure-DP bound min(epsInf, j epsInf^2/2)
// (Bun, Steinke 2016, Prop. 3.3), valid since the base is epsInf-DP.
func (b *wbk19) baseBound(j, lam int) (float64, error) {
	fj := float64(j)
	pure := math.Min(b.epsInf, fj*b.epsInf*b.epsInf/2)
	if j <= wbk19HeadOrder || j == lam || exactForTesting {
		v, err := b.baseExact(j)
		return math.Min(v, pure), err
	}
	i := sort.SearchInts(wbk19Sparse, j)
	if i < len(wbk19Sparse) && wbk19Sparse[i] == j {
		v, err := b.baseExact(j)
		return math.Min(v, pure), err
	}
	lo := wbk19Sparse[i-1]
	hi := lam
	if i < len(wbk19Sparse) && wbk19Sparse[i] < lam {
		hi = wbk19Sparse[i]
	}
	vlo, err := b.baseExact(lo)
	if err != nil {
		return 0, err
	}
	vhi, err := b.baseExact(hi)
	if err != nil {
		return 0, err
	}
	if math.IsInf(vlo, 1) || math.IsInf(vhi, 1) {
		return pure, nil // a vacuous end: only the pure-DP cap is left
	}
	flo, fhi := float64(lo-1)*vlo, float64(hi-1)*vhi
	chord := flo + (fj-float64(lo))/float64(hi-lo)*(fhi-flo)
	return math.Min(conservative(chord/(fj-1)), pure), nil
}

func (b *wbk19) RDP(order float64) (float64, error) {
	if err := checkOrder(order, true); err != nil {
		return 0, err
	}
	if order > maxIntegerOrder {
		return 0, fmt.Errorf("order %g exceeds %d: %w", order, maxIntegerOrder, ErrOrderUnsupported)
	}
	lam := int(order)
	if b.epsInf == 0 {
		return 0, nil
	}
	lf := logFactorials(lam)
	logGamma := logmath.Log(b.gamma)
	logEm1Inf := logExpm1(b.epsInf) // log(e^epsInf - 1)
	fl := float64(lam)
	s := logmath.NewAccumulator()
	e2, err := b.baseBound(2, lam)
	if err != nil {
		return 0, err
	}
	t2 := math.Min(logmath.Log(4)+logExpm1OrInf(e2), e2+math.Min(math.Ln2, 2*logEm1Inf))
	s.Add(2*logGamma + lf.binom(lam, 2) + t2)

	var firstErr error
	head := b.headTable()
	term := func(j int) float64 {
		var e float64
		if j < len(head) && !exactForTesting {
			e = math.Min(head[j], math.Min(b.epsInf, float64(j)*b.epsInf*b.epsInf/2))
		} else {
			var err error
			if e, err = b.baseBound(j, lam); err != nil && firstErr == nil {
				firstErr = err
			}
		}
		fj := float64(j)
		return fj*logGamma + lf.binom(lam, j) + (fj-1)*e + math.Min(math.Ln2, fj*logEm1Inf)
	}
	// Tail: D_j is non-decreasing in j, so for j <= lam the base's RDP is at
	// most any upper bound u at lam (the pure-DP bound, and the base's own
	// bound at lam; for CCS'21 Thm 3.1 its closed-form sibling Thm 3.3).
	// With eps(j) := u the terms are majorised by
	// M_j = gamma^j C(lam,j) e^{(j-1)u} min{2, x^j}, x = e^epsInf - 1, whose
	// ratio M_{m+1}/M_m is at most gamma (lam-m)/(m+1) e^u times x (or 1 once
	// x^m >= 2 > 1): decreasing in m.
	u := math.NaN()
	tail := func(j int) float64 {
		if math.IsNaN(u) {
			u = math.Min(b.epsInf, fl*b.epsInf*b.epsInf/2)
			if c, ok := b.base.(interface{ quickUpper(float64) float64 }); ok {
				u = math.Min(u, c.quickUpper(fl))
			} else if v, err := b.baseExact(lam); err == nil {
				u = math.Min(u, v)
			}
		}
		fj := float64(j)
		logM := fj*logGamma + lf.binom(lam, j) + (fj-1)*u + math.Min(math.Ln2, fj*logEm1Inf)
		logX := logEm1Inf
		if logEm1Inf > 0 && fj*logEm1Inf >= math.Ln2 {
			logX = 0
		}
		return geometricTail(logM, logGamma+logmath.Log(fl-fj)-logmath.Log(fj+1)+u+logX)
	}
	addSeries(&s, 3, lam, term, tail)
	if firstErr != nil {
		return 0, firstErr
	}
	return finite(rdpFromLogSum(s.Value(), order), order, b.Name())
}

// logExpm1OrInf is log(e^x - 1), -Inf at x = 0.
func logExpm1OrInf(x float64) float64 {
	if x <= 0 {
		return math.Inf(-1)
	}
	return logExpm1(x)
}
