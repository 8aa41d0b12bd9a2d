package randomizer

import (
	"fmt"
	"testing"
)

const benchDim = 13000

func benchInput(r Randomizer, src Source) []float64 {
	x := make([]float64, r.Dim())
	if r.Name() == "krr" {
		x[7] = 1
		return x
	}
	if r.Name() == "rr" {
		x[0] = 1
		return x
	}
	for i := range x {
		x[i] = float64(int64(src.Uint64()%2001)-1000) / 1000
	}
	Clip(r.Norm(), x, r.Radius())
	return x
}

// BenchmarkRandomizeDecode measures one report's encode (Randomize) plus
// decode (AddDecoded into a running sum) at d = 13,000, with the seeded PCG
// and the crypto/rand source. reports/s = 1e9 / (ns/op).
func BenchmarkRandomizeDecode(b *testing.B) {
	for _, name := range Names {
		for _, srcName := range []string{"pcg", "crypto"} {
			b.Run(fmt.Sprintf("%s/%s", name, srcName), func(b *testing.B) {
				dim := benchDim
				if name == "rr" {
					dim = 1
				}
				r, err := New(name, Config{Eps0: 2, Dim: dim, Radius: 1, Sigma: 1})
				if err != nil {
					b.Fatal(err)
				}
				src := NewSeededSource(1)
				x := benchInput(r, src)
				if srcName == "crypto" {
					src = NewCryptoSource()
				}
				sum := make([]float64, dim)
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					rep, err := r.Randomize(x, src)
					if err != nil {
						b.Fatal(err)
					}
					if err := r.AddDecoded(rep, 1, sum); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "reports/s")
			})
		}
	}
}

// BenchmarkAggregate measures the server side only: summing k = 10,000
// decoded reports at d = 13,000 (R_inf: O(1) per report; R_1: one FWHT per
// batch through AddDecodedAll versus one O(d) AddDecoded per report).
func BenchmarkAggregate(b *testing.B) {
	const k = 10000
	for _, tc := range []struct {
		name  string
		batch bool
	}{{"rinf", false}, {"r1", false}, {"r1", true}, {"r2", false}} {
		label := tc.name
		if tc.batch {
			label += "-fwht-batch"
		}
		b.Run(label, func(b *testing.B) {
			r, _ := New(tc.name, Config{Eps0: 2, Dim: benchDim, Radius: 1})
			src := NewSeededSource(2)
			x := benchInput(r, src)
			reps := make([]Report, k)
			for i := range reps {
				reps[i], _ = r.Randomize(x, src)
			}
			sum := make([]float64, benchDim)
			b.ResetTimer()
			for b.Loop() {
				if tc.batch {
					if err := AddDecodedAll(r, reps, 1.0/k, sum); err != nil {
						b.Fatal(err)
					}
				} else {
					for _, rep := range reps {
						if err := r.AddDecoded(rep, 1.0/k, sum); err != nil {
							b.Fatal(err)
						}
					}
				}
			}
			b.ReportMetric(float64(b.N)*k/b.Elapsed().Seconds(), "reports/s")
		})
	}
}

func BenchmarkClipL2(b *testing.B) {
	src := NewSeededSource(3)
	x := make([]float64, benchDim)
	for i := range x {
		x[i] = float64(src.Uint64()%1000) / 1000
	}
	y := make([]float64, benchDim)
	for b.Loop() {
		copy(y, x)
		ClipL2(y, 1)
	}
}
