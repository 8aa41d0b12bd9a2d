package randomizer

import (
	"fmt"
	"math/bits"
)

// Wire format, version 1.
//
// Every report is a fixed-size byte string. Byte 0 is the header:
// the high nibble is the format version (1), the low nibble the randomizer
// kind. The payload follows, packed little-endian bit by bit (bit i of the
// payload is bit i%8 of byte 1+i/8); unused high bits of the last byte must
// be zero. Per kind:
//
//	rr       kind 1   1 bit: the reported bit
//	krr      kind 2   ceil(log2 k) bits: the reported category (< k)
//	rinf     kind 3   ceil(log2 d) bits coordinate j (< d), then 1 sign bit (1 = negative)
//	r1       kind 4   log2 D bits Hadamard column j (< D, D = d padded to a power of 2), then 1 sign bit
//	r2       kind 5   ceil(log2 d) bits coordinate j (< d), then 1 sign bit
//	gaussian kind 6   d IEEE-754 float64 values, little-endian (finite)
//	privunit kind 7   d IEEE-754 float64 values, little-endian (finite, on the sphere of radius a/m)
//
// So an R_inf or R_1 report carries exactly log2(d)+1 bits of information
// (rounded up to whole bytes, plus the header byte): 3 bytes at d = 26,010.
// Decoders reject a wrong length, version, kind, non-zero padding, or an
// index outside the domain, with an error wrapping ErrMalformed.
const WireVersion = 1

const (
	kindRR       = 1
	kindKRR      = 2
	kindRInf     = 3
	kindR1       = 4
	kindR2       = 5
	kindGaussian = 6
	kindPrivUnit = 7
)

// indexBits returns ceil(log2 n), the bits needed for an index in [0, n).
func indexBits(n int) int {
	if n <= 1 {
		return 0
	}
	return bits.Len64(uint64(n - 1))
}

// packedSize returns the report length for a payload of nbits bits.
func packedSize(nbits int) int {
	return 1 + (nbits+7)/8
}

func header(kind byte) byte { return WireVersion<<4 | kind }

// encodeIndexSign writes header, index (ib bits) and sign bit into a new
// report of size packedSize(ib+1).
func encodeIndexSign(kind byte, ib int, j uint64, negative bool) Report {
	v := j
	if negative {
		v |= 1 << ib
	}
	return encodeBits(kind, ib+1, v)
}

// encodeBits packs the low nbits (≤ 64) of v after the header.
func encodeBits(kind byte, nbits int, v uint64) Report {
	r := make(Report, packedSize(nbits))
	r[0] = header(kind)
	for i := 1; i < len(r); i++ {
		r[i] = byte(v)
		v >>= 8
	}
	return r
}

// decodeBits checks header and length and returns the payload as an
// integer, rejecting non-zero padding bits.
func decodeBits(r Report, kind byte, nbits int) (uint64, error) {
	if want := packedSize(nbits); len(r) != want {
		return 0, fmt.Errorf("%w: length %d, want %d", ErrMalformed, len(r), want)
	}
	if err := checkHeader(r, kind); err != nil {
		return 0, err
	}
	var v uint64
	for i := len(r) - 1; i >= 1; i-- {
		v = v<<8 | uint64(r[i])
	}
	if nbits < 64 && v>>nbits != 0 {
		return 0, fmt.Errorf("%w: non-zero padding bits", ErrMalformed)
	}
	return v, nil
}

func checkHeader(r Report, kind byte) error {
	if len(r) == 0 {
		return fmt.Errorf("%w: empty", ErrMalformed)
	}
	if v := r[0] >> 4; v != WireVersion {
		return fmt.Errorf("%w: wire version %d, want %d", ErrMalformed, v, WireVersion)
	}
	if k := r[0] & 0xf; k != kind {
		return fmt.Errorf("%w: randomizer kind %d, want %d", ErrMalformed, k, kind)
	}
	return nil
}

// decodeIndexSign parses a report written by encodeIndexSign and checks
// j < n.
func decodeIndexSign(r Report, kind byte, ib int, n int) (j int, negative bool, err error) {
	v, err := decodeBits(r, kind, ib+1)
	if err != nil {
		return 0, false, err
	}
	j = int(v & (1<<ib - 1))
	if j >= n {
		return 0, false, fmt.Errorf("%w: index %d outside [0, %d)", ErrMalformed, j, n)
	}
	return j, v>>ib&1 == 1, nil
}
