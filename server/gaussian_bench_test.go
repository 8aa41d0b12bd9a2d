package server

import (
	"crypto/rand"
	"fmt"
	mrand "math/rand/v2"
	"testing"

	"github.com/shuffledp/shuffledp/randomizer"
)

// BenchmarkAddGaussianNoise measures normal draws per second (ziggurat of
// math/rand/v2) for d = 1e4 and 1e5 from: the seeded ChaCha8 stream of
// simulation (SIMULATION ONLY), PCG, crypto/rand (randomizer.NewCryptoSource,
// buffered 4 KiB getrandom reads) and a ChaCha8 stream keyed from crypto/rand
// (a CSPRNG: math/rand/v2's ChaCha8 is the generator of Go's runtime and of
// crypto/rand itself on some systems).
func BenchmarkAddGaussianNoise(b *testing.B) {
	for _, d := range []int{10_000, 13_706, 100_000} {
		for _, src := range []struct {
			name string
			new  func() randomizer.Source
		}{
			{"chacha8-seeded", func() randomizer.Source { return mrand.NewChaCha8([32]byte{1}) }},
			{"pcg-seeded", func() randomizer.Source { return mrand.NewPCG(1, 2) }},
			{"crypto-rand", randomizer.NewCryptoSource},
			{"chacha8-crypto-key", func() randomizer.Source {
				var k [32]byte
				rand.Read(k[:])
				return mrand.NewChaCha8(k)
			}},
		} {
			b.Run(fmt.Sprintf("d=%d/%s", d, src.name), func(b *testing.B) {
				v := make([]float64, d)
				s := src.new()
				for b.Loop() {
					AddGaussianNoise(v, 1, s)
				}
				b.ReportMetric(float64(d)*float64(b.N)/b.Elapsed().Seconds(), "normals/s")
			})
		}
	}
}
