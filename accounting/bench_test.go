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
