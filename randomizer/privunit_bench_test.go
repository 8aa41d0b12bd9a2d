package randomizer

import (
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"
)

// processCPUNanos is the user+system CPU time of this process: on a shared
// machine, where wall-clock figures depend on other jobs, cpu-ns/op is the
// figure to compare.
func processCPUNanos() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkPrivUnit measures one PrivUnit report (Randomize) plus its
// decode into a running sum at the ScatterNet + logreg dimension d = 3,250
// (eps0 2 and 3) and at d = 13,000, with the trainer's per-client ChaCha8
// stream, the seeded PCG and crypto/rand. It reports CPU-ns/op besides
// wall-clock ns/op.
func BenchmarkPrivUnit(b *testing.B) {
	for _, tc := range []struct {
		d    int
		eps0 float64
	}{{3250, 2}, {3250, 3}, {13000, 2}} {
		for _, srcName := range []string{"chacha8", "pcg", "crypto"} {
			b.Run(fmt.Sprintf("d%d/eps%g/%s", tc.d, tc.eps0, srcName), func(b *testing.B) {
				r, err := NewPrivUnit(tc.eps0, tc.d, 1)
				if err != nil {
					b.Fatal(err)
				}
				src := NewSeededSource(1)
				x := benchInput(r, src)
				switch srcName {
				case "chacha8":
					src = rand.NewChaCha8([32]byte{1})
				case "crypto":
					src = NewCryptoSource()
				}
				sum := make([]float64, tc.d)
				b.ReportAllocs()
				cpu0 := processCPUNanos()
				for b.Loop() {
					rep, err := r.Randomize(x, src)
					if err != nil {
						b.Fatal(err)
					}
					if err := r.AddDecoded(rep, 1, sum); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric((processCPUNanos()-cpu0)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}
