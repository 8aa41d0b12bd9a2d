package accounting

import (
	"fmt"
	"math"
	"sync"

	"github.com/shuffledp/shuffledp/internal/logmath"
)

var logmathLog1pExp = logmath.Log1pExp

// SubsampledShuffleUpper is the RDP upper bound of the subsampled shuffle
// model: each round samples k of n clients without replacement, each applies
// an eps0-LDP randomizer, and the k reports are shuffled.
//
// Girgis, Data, Diggavi, Suresh, Kairouz, "On the Rényi differential privacy
// of the shuffle model" / NeurIPS'21 "Rényi differential privacy of the
// subsampled shuffle model in distributed learning", Theorem 1. With
// gamma = k/n and kbar = floor((k-1)/(2 e^eps0)) + 1, for integer lambda >= 2:
//
//	eps(lambda) <= 1/(lambda-1) log( 1 + 4 C(lambda,2) gamma^2 (e^eps0-1)^2/(kbar e^eps0)
//	    + sum_{j=3..lambda} C(lambda,j) gamma^j j Gamma(j/2) (2 (e^{2eps0}-1)^2/(kbar e^{2eps0}))^{j/2}
//	    + Upsilon ),
//	Upsilon = ((1+a)^lambda - 1 - lambda a) exp(-(k-1)/(8 e^eps0)),  a = gamma (e^{2eps0}-1)/e^eps0.
//
// kbar is floored and Upsilon's argument is the full a, as printed: the most
// conservative of the variants in circulation. (1+a)^lambda - 1 - lambda a
// is evaluated as sum_{j>=2} C(lambda,j) a^j, so it cannot overflow or
// cancel. Only integer orders are supported.
func SubsampledShuffleUpper(n, k int64, eps0 float64) (RDP, error) {
	if err := validateShuffle(n, k, eps0); err != nil {
		return nil, err
	}
	return &neurips21Upper{n: n, k: k, eps0: eps0}, nil
}

type neurips21Upper struct {
	n, k int64
	eps0 float64

	mu sync.Mutex
	w  []float64 // w[j] = log(j Gamma(j/2) gamma^j c^{j/2}), j >= 3
}

func (b *neurips21Upper) Name() string { return BoundNeurIPS21Upper }

// weights returns w[j] for j = 0..lam (entries below 3 unused), cached.
func (b *neurips21Upper) weights(lam int, logGamma, logC float64) []float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	for j := len(b.w); j <= lam; j++ {
		fj := float64(j)
		v := 0.0
		if j >= 3 {
			v = fj*logGamma + logmath.Log(fj) + logmath.LogGamma(fj/2) + fj/2*logC
		}
		b.w = append(b.w, v)
	}
	return b.w
}

func (b *neurips21Upper) RDP(order float64) (float64, error) {
	if err := checkOrder(order, true); err != nil {
		return 0, err
	}
	if b.eps0 == 0 {
		return 0, nil
	}
	lam := int(order)
	if order > maxIntegerOrder {
		return 0, fmt.Errorf("order %g exceeds %d: %w", order, maxIntegerOrder, ErrOrderUnsupported)
	}
	lf := logFactorials(lam)
	e0 := b.eps0
	logGamma := logmath.Log(float64(b.k)) - logmath.Log(float64(b.n))
	kbar := math.Floor(float64(b.k-1)/(2*math.Exp(e0))) + 1
	logKbar := logmath.Log(kbar)
	logC := math.Ln2 + 2*logExpm1(2*e0) - logKbar - 2*e0
	w := b.weights(min(lam, 64), logGamma, logC) // grown on demand below
	logA := logGamma + logExpm1(2*e0) - e0
	tail := -float64(b.k-1) / (8 * math.Exp(e0))
	fl := float64(lam)

	s := logmath.NewAccumulator()
	// j = 2 of the main sum and of Upsilon
	s.Add(logmath.Log(4) + lf.binom(lam, 2) + 2*logGamma + 2*logExpm1(e0) - logKbar - e0)
	s.Add(lf.binom(lam, 2) + 2*logA + tail)
	// j >= 3: t_{j+1}/t_j = gamma sqrt(c) (lam-j) G(j)/j with
	// G(j) = Gamma((j+1)/2)/Gamma(j/2) <= sqrt(j/2) (Wendel's inequality), so
	// the ratio is at most gamma sqrt(c) (lam-j)/sqrt(2j), decreasing in j.
	term := func(j int) float64 {
		if j >= len(w) {
			w = b.weights(min(lam, 2*j), logGamma, logC)
		}
		return lf.binom(lam, j) + w[j]
	}
	addSeries(&s, 3, lam, term, func(j int) float64 {
		fj := float64(j)
		return geometricTail(term(j), logGamma+logC/2+logmath.Log(fl-fj)-logmath.Log(2*fj)/2)
	})
	// Upsilon, j >= 3: ratio (lam-j)/(j+1) a, decreasing in j.
	uterm := func(j int) float64 { return lf.binom(lam, j) + float64(j)*logA + tail }
	addSeries(&s, 3, lam, uterm, func(j int) float64 {
		fj := float64(j)
		return geometricTail(uterm(j), logA+logmath.Log(fl-fj)-logmath.Log(fj+1))
	})
	return finite(rdpFromLogSum(s.Value(), order), order, b.Name())
}

// maxIntegerOrder caps integer orders for the moment bounds (a sum of
// lambda terms per order); 1<<16 is far beyond any useful optimum.
const maxIntegerOrder = 1 << 16

var (
	lfMu    sync.Mutex
	lfCache logFactTable
)

// logFactorials returns a table of log k! up to at least n, shared and grown
// on demand.
func logFactorials(n int) logFactTable {
	lfMu.Lock()
	defer lfMu.Unlock()
	if len(lfCache) <= n {
		size := 4096
		for size <= n {
			size *= 2
		}
		lfCache = newLogFact(size)
	}
	return lfCache
}
