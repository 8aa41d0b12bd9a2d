package randomizer

import (
	"crypto/rand"
	"encoding/binary"
	"math/bits"
	mrand "math/rand/v2"
)

// Source is a stream of uniformly distributed 64-bit words. It is the
// math/rand/v2 Source interface, so rand.New(src) works on any Source.
//
// A Source is not safe for concurrent use: give each goroutine its own.
type Source interface {
	Uint64() uint64
}

// cryptoSource buffers crypto/rand output. Since Go 1.24, crypto/rand.Read
// never returns an error (it crashes the program if the kernel's CSPRNG
// fails), so there is no error path to handle.
type cryptoSource struct {
	buf [4096]byte
	pos int
}

// NewCryptoSource returns a Source that draws from crypto/rand (the
// operating system's CSPRNG), buffered 4096 bytes at a time. It is the
// default, and the only Source fit for deployment. Not safe for concurrent
// use; create one per goroutine.
func NewCryptoSource() Source {
	return &cryptoSource{pos: 4096}
}

func (c *cryptoSource) Uint64() uint64 {
	if c.pos+8 > len(c.buf) {
		rand.Read(c.buf[:])
		c.pos = 0
	}
	v := binary.LittleEndian.Uint64(c.buf[c.pos:])
	// Do not leave consumed randomness lying in memory.
	binary.LittleEndian.PutUint64(c.buf[c.pos:], 0)
	c.pos += 8
	return v
}

// NewSeededSource returns a PCG generator (math/rand/v2) seeded with seed,
// for reproducible simulations and deterministic tests.
//
// NOT FOR DEPLOYMENT: anyone who knows or guesses the seed can recompute
// every draw and remove the privacy noise. Use NewCryptoSource for real
// clients.
func NewSeededSource(seed uint64) Source {
	return mrand.NewPCG(seed, 0x5eed5eed5eed5eed^seed)
}

// UniformIndex returns an integer uniformly distributed on [0, n), n ≥ 1,
// with no modulo bias: Lemire's multiply-and-reject method ("Fast random
// integer generation in an interval", ACM TOMACS 2019), which accepts a
// draw unless it falls in the (2^64 mod n)-sized biased region.
func UniformIndex(src Source, n uint64) uint64 {
	if n == 0 {
		panic("randomizer: UniformIndex needs n >= 1")
	}
	hi, lo := bits.Mul64(src.Uint64(), n)
	if lo < n {
		thresh := -n % n // 2^64 mod n
		for lo < thresh {
			hi, lo = bits.Mul64(src.Uint64(), n)
		}
	}
	return hi
}

// Bernoulli returns true with probability exactly t/2^64: it compares one
// uniform 64-bit word with t, so there is no floating-point porosity.
func Bernoulli(src Source, t uint64) bool {
	return src.Uint64() < t
}

// normal returns a standard normal draw from src (math/rand/v2's ziggurat).
func normals(src Source) *mrand.Rand {
	return mrand.New(src)
}
