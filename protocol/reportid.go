package protocol

import (
	"crypto/rand"
	"errors"
	"fmt"
)

// ReportIDSize is the length of a report ID: 16 random bytes, as the
// report IDs of the IETF DAP draft.
const ReportIDSize = 16

// HeaderSize is the length of an envelope's clear header: the version,
// the key ID and the report ID (see HPKESealer for the layout).
const HeaderSize = 2 + ReportIDSize

// EnvelopeVersion is the version byte of the envelope layout that
// HPKESealer writes and HPKEOpener reads.
const EnvelopeVersion uint8 = 1

// ErrEnvelope reports a sealed report that is not a well-formed envelope:
// too short, another length than the run's, an unknown version, or (after
// decryption) malformed padding.
var ErrEnvelope = errors.New("malformed envelope")

// Header is the clear header of a sealed report. The shuffler may read it
// without reading the report: the key ID to refuse a key the server does
// not hold, the report ID to refuse a replay. Both are bound into the
// AEAD's associated data, so altering either makes the report fail to
// open.
type Header struct {
	Version  uint8
	KeyID    uint8
	ReportID [ReportIDSize]byte
}

// ParseHeader returns the clear header of a sealed report. It checks the
// version and the minimum length, not the report's integrity (only the
// server, opening the report, can).
func ParseHeader(sealed []byte) (Header, error) {
	if len(sealed) < HeaderSize {
		return Header{}, fmt.Errorf("%w: %d bytes, shorter than the %d-byte header", ErrEnvelope, len(sealed), HeaderSize)
	}
	if sealed[0] != EnvelopeVersion {
		return Header{}, fmt.Errorf("%w: version %d, want %d", ErrEnvelope, sealed[0], EnvelopeVersion)
	}
	h := Header{Version: sealed[0], KeyID: sealed[1]}
	copy(h.ReportID[:], sealed[2:HeaderSize])
	return h, nil
}

// ReportID returns the report ID of a sealed report, for a shuffler that
// rejects replays: a report ID seen before is the same report submitted
// again (IDs are 16 bytes from crypto/rand, so two honest reports collide
// with probability about m²/2^129 among m reports).
func ReportID(sealed []byte) ([ReportIDSize]byte, error) {
	h, err := ParseHeader(sealed)
	return h.ReportID, err
}

// newReportID returns a fresh random report ID from crypto/rand.
func newReportID(id *[ReportIDSize]byte) error {
	if _, err := rand.Read(id[:]); err != nil {
		return fmt.Errorf("report id: %w", err)
	}
	return nil
}
