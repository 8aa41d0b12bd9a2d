package accounting

import (
	"fmt"
	"math"
	"sync"
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

	mu    sync.Mutex
	table []float64 // base eps(j), j = 0..len-1
}

func (b *wbk19) Name() string { return b.name }

// baseTable returns base eps(j) for j = 2..maxOrder.
func (b *wbk19) baseTable(maxOrder int) ([]float64, error) {
	if p, ok := b.base.(interface{ prefix(int) []float64 }); ok {
		return p.prefix(maxOrder), nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for j := len(b.table); j <= maxOrder; j++ {
		if j < 2 {
			b.table = append(b.table, 0)
			continue
		}
		v, err := b.base.RDP(float64(j))
		if err != nil {
			return nil, fmt.Errorf("base curve %s at order %d: %w", b.base.Name(), j, err)
		}
		b.table = append(b.table, v)
	}
	return b.table, nil
}

func (b *wbk19) RDP(order float64) (float64, error) {
	if err := checkOrder(order, true); err != nil {
		return 0, err
	}
	if order > maxIntegerOrder {
		return 0, fmt.Errorf("order %g exceeds %d: %w", order, maxIntegerOrder, ErrOrderUnsupported)
	}
	lam := int(order)
	eps, err := b.baseTable(lam)
	if err != nil {
		return 0, err
	}
	if b.epsInf == 0 {
		return 0, nil
	}
	lf := logFactorials(lam)
	logGamma := math.Log(b.gamma)
	logEm1Inf := logExpm1(b.epsInf) // log(e^epsInf - 1)
	s := newLSE()
	e2 := eps[2]
	t2 := math.Min(math.Log(4)+logExpm1OrInf(e2), e2+math.Min(math.Ln2, 2*logEm1Inf))
	s.add(2*logGamma + lf.binom(lam, 2) + t2)
	for j := 3; j <= lam; j++ {
		fj := float64(j)
		s.add(fj*logGamma + lf.binom(lam, j) + (fj-1)*eps[j] + math.Min(math.Ln2, fj*logEm1Inf))
	}
	return finite(rdpFromLogSum(s.value(), order), order, b.Name())
}

// logExpm1OrInf is log(e^x - 1), -Inf at x = 0.
func logExpm1OrInf(x float64) float64 {
	if x <= 0 {
		return math.Inf(-1)
	}
	return logExpm1(x)
}
