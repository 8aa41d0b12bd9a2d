package approxdp

import "testing"

// The reference example: one NumericalEpsilon (upper and lower) at
// n=1e5, eps0=4, delta=1e-6.
func BenchmarkNumericalEpsilonN1e5(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if _, err := NumericalEpsilon(100000, 4, 1e-6); err != nil {
			b.Fatal(err)
		}
	}
}

// One upper bound at n=1e6, eps0=4, delta=1e-8 (spec §7's largest triple).
func BenchmarkNumericalEpsilonUpperN1e6(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if _, err := NumericalEpsilonUpper(1000000, 4, 1e-8); err != nil {
			b.Fatal(err)
		}
	}
}

// One delta evaluation at n=1e9 (4096 blocks of clone counts).
func BenchmarkNumericalDeltaN1e9(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if _, err := NumericalDelta(1000000000, 3, 0.005); err != nil {
			b.Fatal(err)
		}
	}
}

// The whole fmt20+kov15 pipeline at the NeurIPS'21 Fig. 2a setting
// (k=1000 reports per shuffle), delta split optimised, cold cache.
func BenchmarkSubsampledShuffleFig2a(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if _, err := SubsampledShuffle(1000000, 1000, 2, 100000, 1e-8, ShuffleBest); err != nil {
			b.Fatal(err)
		}
	}
}

// Fig. 2b setting (k=1e4 reports per shuffle, eps0=1), cold cache.
func BenchmarkSubsampledShuffleFig2b(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if _, err := SubsampledShuffle(10000000, 10000, 1, 100000, 1e-8, ShuffleBest); err != nil {
			b.Fatal(err)
		}
	}
}

// A 21-point sweep over T at the Fig. 2a setting sharing one shuffle curve.
func BenchmarkFig2aSweep21(b *testing.B) {
	for i := 0; i < b.N; i++ {
		curve, _ := NewShuffleCurve(1000, 2, ShuffleBest)
		for _, T := range []int64{1, 2, 3, 6, 10, 18, 32, 56, 100, 178, 316, 562, 1000, 1778, 3162, 5623, 10000, 17783, 31623, 56234, 100000} {
			if _, err := SubsampledShuffleKOV15(curve, 0.001, T, 1e-8); err != nil {
				b.Fatal(err)
			}
		}
	}
}
