package accounting

import (
	"math"
	"testing"
)

// BenchmarkBestQuery is one cold (epsilon, delta) query with the best bound
// over the default order grid: curve construction, evaluation at every
// order, composition and conversion.
func BenchmarkBestQuery(b *testing.B) {
	for i := 0; i < b.N; i++ {
		m, _ := Best(1000000, 1000, 2)
		a, _ := NewAccountant(nil)
		_ = a.Compose(m, 100000)
		if _, err := a.Epsilon(1e-8); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBestQueryWarm is one more round composed and converted with a
// curve the accountant has already evaluated: the per-round cost of
// tracking the budget during training.
func BenchmarkBestQueryWarm(b *testing.B) {
	m, _ := Best(1000000, 1000, 2)
	a, _ := NewAccountant(nil)
	_ = a.Compose(m, 1)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = a.Compose(m, 1)
		if _, err := a.Epsilon(1e-8); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFig2aSweep is the NeurIPS'21 Fig. 2a sweep: 50 values of T from 1
// to 1e5 (log-spaced), every RDP bound, default grid.
func BenchmarkFig2aSweep(b *testing.B) {
	steps := make([]int64, 50)
	for i := range steps {
		steps[i] = int64(math.Round(math.Pow(10, 5*float64(i)/49)))
	}
	bounds := []string{BoundNeurIPS21Upper, BoundNeurIPS21Lower, BoundCCS21WBK19, BoundBest}
	for i := 0; i < b.N; i++ {
		for _, name := range bounds {
			m, _ := NewBound(MechanismSubsampledShuffle, name, 1000000, 1000, 2)
			a, _ := NewAccountant(nil)
			curve, err := a.Curve(m)
			if err != nil {
				b.Fatal(err)
			}
			for _, T := range steps {
				total := make([]float64, len(curve))
				best := math.Inf(1)
				for j, v := range curve {
					total[j] = float64(T) * v
					if math.IsInf(v, 1) {
						continue
					}
					e, _, _ := EpsilonFromRDP(a.orders[j], total[j], 1e-8)
					best = math.Min(best, e)
				}
				if math.IsInf(best, 1) {
					b.Fatal("no usable order")
				}
			}
		}
	}
}

// BenchmarkKRR3LowerFig2aGrid: build KRR3Lower at Fig. 2a (n=1e6, k=1000,
// eps0=2) and evaluate it on the default grid (291 orders).
func BenchmarkKRR3LowerFig2aGrid(b *testing.B) { benchKRR3Grid(b, 1000000, 1000, 2) }

// BenchmarkKRR3LowerLargeK: the same at n=1e7, k=1e4, eps0=1.
func BenchmarkKRR3LowerLargeK(b *testing.B) { benchKRR3Grid(b, 10000000, 10000, 1) }

// BenchmarkKRR3LowerShuffle: the same for the plain shuffle n=k=1000,
// eps0=2, where the far tails dominate at high orders.
func BenchmarkKRR3LowerShuffle(b *testing.B) { benchKRR3Grid(b, 1000, 1000, 2) }

func benchKRR3Grid(b *testing.B, n, k int64, eps0 float64) {
	orders := DefaultOrders()
	for i := 0; i < b.N; i++ {
		m, err := KRR3Lower(n, k, eps0)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := EvaluateCurve(m, orders); err != nil {
			b.Fatal(err)
		}
	}
}
