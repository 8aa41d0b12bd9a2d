package protocol

import (
	"crypto/hpke"
	"fmt"
	"testing"
)

// stdlibSealer is the bare single-shot hpke.Seal of crypto/hpke (no report
// ID, no associated data, no padding, no envelope): the floor a sealer can
// reach with this ciphersuite.
type stdlibSealer struct{ s *HPKESealer }

func (b stdlibSealer) Seal(_ Binding, report []byte) ([]byte, error) {
	return hpke.Seal(b.s.pk, b.s.suite.kdf, b.s.suite.aead, hpkeInfo, report)
}

func (b stdlibSealer) Overhead() int { return encapsulatedKeySize + aeadTagSize }

// stdlibOpener is the bare single-shot hpke.Open.
type stdlibOpener struct{ k openKey }

func (b stdlibOpener) Open(_ Binding, sealed []byte) ([]byte, error) {
	return hpke.Open(b.k.sk, b.k.suite.kdf, b.k.suite.aead, hpkeInfo, sealed)
}

// benchSizes are report sizes of real runs at d = 13,000: rinf (3 bytes)
// and privunit/gaussian (1 + 8d = 104,001 bytes); 1 KiB in between.
var benchSizes = []int{3, 1024, 104001}

// BenchmarkSeal: one report sealed per op, HPKE (X25519, HKDF-SHA256,
// AES-128-GCM, fresh report ID and ephemeral key) against crypto/hpke's
// bare single-shot Seal and the plaintext simulation "seal".
func BenchmarkSeal(b *testing.B) {
	key, err := GenerateKey(1)
	if err != nil {
		b.Fatal(err)
	}
	bind := Binding{Run: "bench-run", Round: 1}
	for _, size := range benchSizes {
		rep := make([]byte, size)
		rep[0] = 1
		s, err := NewHPKESealer(key.Config, size)
		if err != nil {
			b.Fatal(err)
		}
		for _, tc := range []struct {
			name string
			s    Sealer
		}{{"hpke", s}, {"stdlib", stdlibSealer{s}}, {"plaintext", Plaintext{}}} {
			b.Run(fmt.Sprintf("%s/bytes=%d", tc.name, size), func(b *testing.B) {
				b.SetBytes(int64(size))
				b.ReportAllocs()
				for b.Loop() {
					if _, err := tc.s.Seal(bind, rep); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkOpen: one report opened per op (decapsulation, key schedule,
// AEAD open, padding removal) against crypto/hpke's bare single-shot Open
// and the plaintext simulation "open".
func BenchmarkOpen(b *testing.B) {
	key, err := GenerateKey(1)
	if err != nil {
		b.Fatal(err)
	}
	bind := Binding{Run: "bench-run", Round: 1}
	for _, size := range benchSizes {
		rep := make([]byte, size)
		rep[0] = 1
		s, o := newPair(b, key, size)
		sealed, err := s.Seal(bind, rep)
		if err != nil {
			b.Fatal(err)
		}
		bare, err := stdlibSealer{s}.Seal(bind, rep)
		if err != nil {
			b.Fatal(err)
		}
		for _, tc := range []struct {
			name string
			o    Opener
			env  []byte
		}{{"hpke", o, sealed}, {"stdlib", stdlibOpener{o.keys[1]}, bare}, {"plaintext", Plaintext{}, rep}} {
			b.Run(fmt.Sprintf("%s/bytes=%d", tc.name, size), func(b *testing.B) {
				b.SetBytes(int64(size))
				b.ReportAllocs()
				for b.Loop() {
					if _, err := tc.o.Open(bind, tc.env); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
