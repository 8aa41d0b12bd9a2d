package randomizer

import (
	"encoding/binary"
	"fmt"
)

// Batch packing (wire format version 1).
//
// A single report spends a header byte and rounds its payload up to whole
// bytes. A shuffled batch going from the shuffler to the server can be sent
// as one packed byte string instead:
//
//	byte 0      header: version (high nibble) | randomizer kind (low nibble)
//	uvarint n   the number of reports
//	payload     n payloads of exactly b bits each, concatenated
//	            little-endian bit by bit; the unused high bits of the last
//	            byte are zero
//
// where b is the randomizer's payload width: 1 (rr), ceil(log2 k) (krr),
// ceil(log2 d)+1 (rinf, r2), log2 D + 1 (r1), 64·d (gaussian, privunit),
// 32·d (djw). At
// d = 26,010 an R_inf batch of 10,000 reports is 20,003 bytes: 16 bits per
// report. UnpackReports rejects a wrong header or length, set padding bits,
// and any report the randomizer's decoder rejects.

// payloadBits returns the payload width b of r's reports.
func payloadBits(r Randomizer) (int, byte, error) {
	switch v := r.(type) {
	case *BinaryRR:
		return 1, kindRR, nil
	case *KRR:
		return v.ib, kindKRR, nil
	case *RInf:
		return v.ib + 1, kindRInf, nil
	case *R1:
		return v.ib + 1, kindR1, nil
	case *R2:
		return v.ib + 1, kindR2, nil
	case *Gaussian:
		return 64 * v.d, kindGaussian, nil
	case *PrivUnit:
		return 64 * v.d, kindPrivUnit, nil
	case *DJW:
		return 32 * v.d, kindDJW, nil
	}
	return 0, 0, fmt.Errorf("randomizer %s has no packed wire format", r.Name())
}

// PackReports packs reports of r (each validated by r's decoder) into one
// byte string, b bits per report.
func PackReports[R ~[]byte](r Randomizer, reps []R) ([]byte, error) {
	b, kind, err := payloadBits(r)
	if err != nil {
		return nil, err
	}
	scratch := make([]float64, r.Dim())
	out := []byte{header(kind)}
	out = binary.AppendUvarint(out, uint64(len(reps)))
	start := len(out)
	out = append(out, make([]byte, (len(reps)*b+7)/8)...)
	bit := 0
	for i, rep := range reps {
		if err := r.AddDecoded(Report(rep), 0, scratch); err != nil {
			return nil, fmt.Errorf("report %d: %w", i, err)
		}
		copyBits(out[start:], bit, rep[1:], b)
		bit += b
	}
	return out, nil
}

// UnpackReports is the inverse of PackReports: it returns the individual
// reports, each in the single-report wire format, or an error wrapping
// ErrMalformed.
func UnpackReports(r Randomizer, data []byte) ([]Report, error) {
	b, kind, err := payloadBits(r)
	if err != nil {
		return nil, err
	}
	if err := checkHeader(data, kind); err != nil {
		return nil, err
	}
	n, k := binary.Uvarint(data[1:])
	if k <= 0 || k != len(binary.AppendUvarint(nil, n)) {
		return nil, fmt.Errorf("%w: bad or non-minimal report count", ErrMalformed)
	}
	payload := data[1+k:]
	// Guard the multiplication: n·b bits must fit in the payload.
	if n > uint64(len(payload))*8/uint64(b) {
		return nil, fmt.Errorf("%w: %d reports of %d bits do not fit in %d bytes", ErrMalformed, n, b, len(payload))
	}
	nbits := int(n) * b
	if len(payload) != (nbits+7)/8 {
		return nil, fmt.Errorf("%w: payload of %d bytes, want %d for %d reports", ErrMalformed, len(payload), (nbits+7)/8, n)
	}
	if nbits%8 != 0 && payload[len(payload)-1]>>(nbits%8) != 0 {
		return nil, fmt.Errorf("%w: non-zero padding bits", ErrMalformed)
	}
	size := packedSize(b)
	scratch := make([]float64, r.Dim())
	reps := make([]Report, n)
	for i := range reps {
		rep := make(Report, size)
		rep[0] = header(kind)
		extractBits(rep[1:], payload, i*b, b)
		if err := r.AddDecoded(rep, 0, scratch); err != nil {
			return nil, fmt.Errorf("report %d: %w", i, err)
		}
		reps[i] = rep
	}
	return reps, nil
}

// copyBits writes the low nb bits of src (little-endian bit order) into dst
// starting at bit offset off. dst's bits there must be zero.
func copyBits(dst []byte, off int, src []byte, nb int) {
	if off%8 == 0 {
		full := nb / 8
		copy(dst[off/8:], src[:full])
		if rem := nb % 8; rem != 0 {
			dst[off/8+full] |= src[full] & (1<<rem - 1)
		}
		return
	}
	for i := 0; i < nb; i++ {
		if src[i/8]>>(i%8)&1 == 1 {
			p := off + i
			dst[p/8] |= 1 << (p % 8)
		}
	}
}

// extractBits writes nb bits of src starting at bit offset off into dst
// (zeroed, little-endian bit order).
func extractBits(dst []byte, src []byte, off, nb int) {
	if off%8 == 0 {
		full := nb / 8
		copy(dst, src[off/8:off/8+full])
		if rem := nb % 8; rem != 0 {
			dst[full] = src[off/8+full] & (1<<rem - 1)
		}
		return
	}
	for i := 0; i < nb; i++ {
		p := off + i
		if src[p/8]>>(p%8)&1 == 1 {
			dst[i/8] |= 1 << (i % 8)
		}
	}
}
