package sampledgauss

import (
	"testing"

	"github.com/shuffledp/shuffledp/accounting"
)

// benchCurve evaluates the curve on accounting's default order grid (28
// fractional orders below 10, every integer 2..256, and 8 orders up to
// 4096), as one Accountant.Compose does.
func benchCurve(b *testing.B, q, sigma float64) {
	orders := accounting.DefaultOrders()
	m, err := New(q, sigma)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := accounting.EvaluateCurve(m, orders); err != nil {
			b.Fatal(err)
		}
	}
}

// A typical DP-SGD setting: batch 256 of 60000, sigma 1.1.
func BenchmarkCurveDefaultOrdersTypical(b *testing.B) { benchCurve(b, 256.0/60000, 1.1) }

// q = 0.5, sigma = 50: the fractional series need the most terms there.
func BenchmarkCurveDefaultOrdersHalfRate(b *testing.B) { benchCurve(b, 0.5, 50) }

// Small sigma: the large orders' binomial sums dominate.
func BenchmarkCurveDefaultOrdersSmallSigma(b *testing.B) { benchCurve(b, 0.01, 0.5) }

// One fractional order in the hardest regime of the golden grid.
func BenchmarkFractionalOrder(b *testing.B) {
	m, _ := New(0.5, 50)
	for i := 0; i < b.N; i++ {
		if _, err := m.RDP(1.01); err != nil {
			b.Fatal(err)
		}
	}
}
