package pld

import "testing"

// Benchmarks of the settings of the accounting comparison table
// (docs/pld.md): the whole route, from the mechanism's parameters to the
// epsilon interval at delta.
var benchSettings = []struct {
	name  string
	n, k  int64
	eps0  float64
	steps int
	delta float64
}{
	{"apple_n1e5_eps4_T1", 1e5, 1e5, 4, 1, 1e-6},
	{"n1e5_k1e3_eps3_T10", 1e5, 1e3, 3, 10, 1e-5},
	{"n1e5_k1e3_eps3_T100", 1e5, 1e3, 3, 100, 1e-5},
	{"n1e5_k1e3_eps3_T1000", 1e5, 1e3, 3, 1000, 1e-5},
	{"fig3_n6e4_k1e4_eps1.5_T1200", 6e4, 1e4, 1.5, 1200, 1e-5},
	{"fig2a_n1e6_k1e3_eps2_T1e5", 1e6, 1e3, 2, 100000, 1e-8},
}

func BenchmarkCloneShuffle(b *testing.B) {
	for _, s := range benchSettings {
		b.Run(s.name, func(b *testing.B) {
			var iv Interval
			for range b.N {
				var a Accountant
				if err := a.AddClone(s.n, s.k, s.eps0, s.steps); err != nil {
					b.Fatal(err)
				}
				var err error
				if iv, err = a.Epsilon(s.delta); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(iv.Upper, "eps_upper")
			b.ReportMetric(iv.Lower, "eps_lower")
		})
	}
}

func BenchmarkSampledGaussian(b *testing.B) {
	for _, s := range []struct {
		name        string
		sigma, rate float64
		steps       int
	}{
		{"sigma1_q0.01_T1000", 1, 0.01, 1000},
		{"sigma0.8_q0.004_T10000", 0.8, 0.004, 10000},
	} {
		b.Run(s.name, func(b *testing.B) {
			var iv Interval
			for range b.N {
				var a Accountant
				if err := a.AddSampledGaussian(s.sigma, s.rate, s.steps); err != nil {
					b.Fatal(err)
				}
				var err error
				if iv, err = a.Epsilon(1e-5); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(iv.Upper, "eps_upper")
			b.ReportMetric(iv.Lower, "eps_lower")
		})
	}
}
