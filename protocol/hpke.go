package protocol

import (
	"crypto/hpke"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"
)

// HPKEOverhead is the number of bytes HPKESealer adds to a report of the
// run's report size: the clear header (18), the encapsulated key (32),
// the padding marker (1) and the AEAD tag (16).
const HPKEOverhead = 67

// HPKEOverhead is the sum of its parts (a compile-time check both ways).
var (
	_ [HPKEOverhead - (HeaderSize + encapsulatedKeySize + 1 + aeadTagSize)]struct{}
	_ [(HeaderSize + encapsulatedKeySize + 1 + aeadTagSize) - HPKEOverhead]struct{}
)

// maxReportSize bounds the report size of a sealer or opener, far below
// the AEADs' message limits and int overflow.
const maxReportSize = 1 << 30

// hpkeInfo is the HPKE info string of every envelope of version 1: a
// domain-separation label naming the protocol, the envelope version and
// the direction (client to server). As in the IETF DAP draft, the values a
// report is bound to go into the associated data, not the info.
var hpkeInfo = []byte("shuffledp report v1 client->server")

// ErrUnknownKey reports an envelope whose key ID the opener holds no
// private key for (a retired or never-published key config).
var ErrUnknownKey = errors.New("unknown key id")

// ErrOpen reports an envelope that does not decrypt: it was sealed for
// another run, round or key, or any of its bytes was altered.
var ErrOpen = errors.New("report does not open")

// HPKESealer seals reports to the server with HPKE (RFC 9180, base mode)
// under one KeyConfig, padding every report to one fixed length so that
// all sealed reports of a run have the same length.
//
// # Envelope layout (version 1)
//
// A sealed report of a run whose report size is L bytes is exactly
// L + HPKEOverhead = L + 67 bytes:
//
//	offset  length  field
//	0       1       version, EnvelopeVersion (1)
//	1       1       key ID, KeyConfig.ID of the server key it is sealed to
//	2       16      report ID, fresh from crypto/rand for every report
//	18      32      enc, the encapsulated key of DHKEM(X25519, HKDF-SHA256)
//	50      L+17    ciphertext: AEAD(padded report), L+1 bytes and a 16-byte tag
//
// Bytes 0..17 are the clear header (ParseHeader, ReportID): the shuffler
// may read them to refuse unknown keys and replays, and learns nothing
// else. The rest is the output of HPKE's SetupBaseS(pkR, info) and
// context.Seal(aad, padded), with
//
//	info   = "shuffledp report v1 client->server"  (ASCII, no terminator)
//	aad    = header (bytes 0..17) || round || run length || run
//	round  = Binding.Round, 8 bytes big endian (two's complement)
//	run length = len(Binding.Run), 4 bytes big endian; run its bytes
//	padded = report || 0x80 || 0x00 × (L - len(report))
//
// So the run, the round, the key ID and the report ID are all bound into
// the associated data (as the DAP draft binds the task ID and the report
// metadata, draft-ietf-ppm-dap, "Upload Request"), and enc is bound through
// the KEM's key schedule: a report sealed for one (run, round, key) opens
// for no other, and a change of any byte makes it fail to open. The
// padding (ISO/IEC 7816-4 style) is removable without knowing the report's
// length, so reports shorter than L are sealed to the same length.
//
// An HPKESealer is safe for concurrent use; every Seal uses a fresh HPKE
// context (a fresh ephemeral key: one set up by Precompute, or its own)
// and a fresh report ID.
type HPKESealer struct {
	config     KeyConfig
	suite      suite
	pk         hpke.PublicKey
	reportSize int
	// padded recycles the padded-plaintext buffers (reportSize+1 bytes),
	// which matter for reports of many kilobytes.
	padded sync.Pool
	// ready holds senders set up ahead by Precompute; each is taken out
	// under mu by exactly one Seal.
	mu    sync.Mutex
	ready []presender
}

// presender is an HPKE sender context set up ahead of its report: the
// encapsulated key and the context of one fresh ephemeral key.
type presender struct {
	enc []byte
	ctx *hpke.Sender
}

// MaxPrecomputed bounds the senders an HPKESealer holds ready (each
// holds an AEAD context and its 32-byte encapsulated key).
const MaxPrecomputed = 1 << 16

// Precompute sets up to n more HPKE sender contexts ahead of Seal (at most
// MaxPrecomputed held), so that a later Seal does only the report's AEAD
// encryption: the KEM half of HPKE (an X25519 key generation and
// Diffie-Hellman, the key schedule) moves off the critical path, e.g. to
// a client's idle time between rounds. It returns how many are ready.
//
// This changes nothing a sealed report reveals: the sender context is
// hpke.NewSender(public key, KDF, AEAD, info) with the run-independent
// info of every envelope, so it depends on neither the report, nor the
// round, nor the binding (all of which enter through the associated data
// at Seal); each precomputed context is taken out of the sealer by exactly
// one Seal and used for that one report, so no two envelopes share an
// ephemeral key, exactly as when Seal sets up its own.
func (s *HPKESealer) Precompute(n int) (int, error) {
	s.mu.Lock()
	n = min(n, MaxPrecomputed-len(s.ready))
	s.mu.Unlock()
	made := make([]presender, 0, max(n, 0))
	for range n {
		enc, ctx, err := hpke.NewSender(s.pk, s.suite.kdf, s.suite.aead, hpkeInfo)
		if err != nil {
			return s.Precomputed(), fmt.Errorf("precompute: %w", err)
		}
		made = append(made, presender{enc: enc, ctx: ctx})
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ready = append(s.ready, made[:min(len(made), MaxPrecomputed-len(s.ready))]...)
	return len(s.ready), nil
}

// Precomputed is the number of sender contexts Precompute holds ready.
func (s *HPKESealer) Precomputed() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.ready)
}

// sender returns a precomputed sender context, taken out of the sealer,
// or sets up a fresh one.
func (s *HPKESealer) sender() ([]byte, *hpke.Sender, error) {
	s.mu.Lock()
	if n := len(s.ready); n > 0 {
		p := s.ready[n-1]
		s.ready[n-1] = presender{}
		s.ready = s.ready[:n-1]
		s.mu.Unlock()
		return p.enc, p.ctx, nil
	}
	s.mu.Unlock()
	return hpke.NewSender(s.pk, s.suite.kdf, s.suite.aead, hpkeInfo)
}

// NewHPKESealer returns a sealer to the server key config for reports of at
// most reportSize bytes (the run's report size, randomizer.ReportSize): the
// run's sealed reports all have reportSize + HPKEOverhead bytes.
func NewHPKESealer(config KeyConfig, reportSize int) (*HPKESealer, error) {
	if err := checkReportSize(reportSize); err != nil {
		return nil, err
	}
	s, pk, err := config.publicKey()
	if err != nil {
		return nil, err
	}
	config.PublicKey = pk.Bytes()
	h := &HPKESealer{config: config, suite: s, pk: pk, reportSize: reportSize}
	h.padded.New = func() any { b := make([]byte, reportSize+1); return &b }
	return h, nil
}

func checkReportSize(n int) error {
	if n < 1 || n > maxReportSize {
		return fmt.Errorf("report-bytes must be in [1, %d], got %d", maxReportSize, n)
	}
	return nil
}

// KeyID is the ID of the key config the sealer seals to.
func (s *HPKESealer) KeyID() uint8 { return s.config.ID }

// Overhead implements Sealer: HPKEOverhead, exact for a report of the run's
// report size (a shorter report is padded up, so its sealed length is the
// same).
func (s *HPKESealer) Overhead() int { return HPKEOverhead }

// SealedSize is the length of every report the sealer seals.
func (s *HPKESealer) SealedSize() int { return s.reportSize + HPKEOverhead }

// Seal implements Sealer: it pads report to the run's report size and
// seals it for b in a fresh envelope (see the type's documentation for
// the layout). A report longer than the report size is refused.
func (s *HPKESealer) Seal(b Binding, report []byte) ([]byte, error) {
	if len(report) > s.reportSize {
		return nil, fmt.Errorf("seal: report of %d bytes, the run's reports have at most %d", len(report), s.reportSize)
	}
	out := make([]byte, HeaderSize, s.SealedSize())
	out[0], out[1] = EnvelopeVersion, s.config.ID
	var id [ReportIDSize]byte
	if err := newReportID(&id); err != nil {
		return nil, err
	}
	copy(out[2:], id[:])
	aad, err := appendAAD(make([]byte, 0, HeaderSize+12+len(b.Run)), out[:HeaderSize], b)
	if err != nil {
		return nil, err
	}
	enc, ctx, err := s.sender()
	if err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	if len(enc) != encapsulatedKeySize {
		return nil, fmt.Errorf("seal: encapsulated key of %d bytes, want %d", len(enc), encapsulatedKeySize)
	}
	out = append(out, enc...)
	buf := s.padded.Get().(*[]byte)
	padded := *buf
	copy(padded, report)
	padded[len(report)] = 0x80
	clear(padded[len(report)+1:])
	ct, err := ctx.Seal(aad, padded)
	clear(padded[:len(report)+1]) // no plaintext left in the pool
	s.padded.Put(buf)
	if err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	out = append(out, ct...)
	if len(out) != s.SealedSize() {
		return nil, fmt.Errorf("seal: envelope of %d bytes, want %d", len(out), s.SealedSize())
	}
	return out, nil
}

// appendAAD appends the associated data of an envelope with the given
// header sealed for b to dst.
func appendAAD(dst, header []byte, b Binding) ([]byte, error) {
	if uint64(len(b.Run)) > math.MaxUint32 {
		return nil, fmt.Errorf("run: %d bytes, longer than 2^32-1", len(b.Run))
	}
	dst = append(dst, header...)
	dst = binary.BigEndian.AppendUint64(dst, uint64(b.Round))
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(b.Run)))
	return append(dst, b.Run...), nil
}

// HPKEOpener opens the envelopes of HPKESealer on the server. It holds the
// private keys of every key config still in use, by ID, so keys can
// rotate: publish a new config, keep the old key until no report sealed
// to it can arrive any more, then build an opener without it. An envelope
// naming any other key ID is refused with ErrUnknownKey before any
// decryption.
//
// An HPKEOpener is immutable and safe for concurrent use.
type HPKEOpener struct {
	keys       map[uint8]openKey
	reportSize int
}

type openKey struct {
	suite suite
	sk    hpke.PrivateKey
}

// NewHPKEOpener returns an opener for envelopes of reports of reportSize
// bytes (the run's report size) sealed to any of keys. Key IDs must be
// distinct, and every key must be valid (ReceiverKey.Validate).
func NewHPKEOpener(reportSize int, keys ...ReceiverKey) (*HPKEOpener, error) {
	if err := checkReportSize(reportSize); err != nil {
		return nil, err
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%w: an opener needs at least one key", ErrKeyConfig)
	}
	o := &HPKEOpener{keys: make(map[uint8]openKey, len(keys)), reportSize: reportSize}
	for i := range keys {
		id := keys[i].Config.ID
		if _, dup := o.keys[id]; dup {
			return nil, fmt.Errorf("%w: key id %d given twice", ErrKeyConfig, id)
		}
		s, sk, err := keys[i].privateKey()
		if err != nil {
			return nil, err
		}
		o.keys[id] = openKey{suite: s, sk: sk}
	}
	return o, nil
}

// SealedSize is the length of every envelope the opener accepts.
func (o *HPKEOpener) SealedSize() int { return o.reportSize + HPKEOverhead }

// Open implements Opener: it returns the report inside the envelope sealed
// for b, without its padding. It fails with ErrEnvelope if sealed has
// another length than SealedSize, another version, or malformed padding;
// with ErrUnknownKey if the opener holds no key of its key ID; and with
// ErrOpen if it was sealed for another run, round or key, or altered.
func (o *HPKEOpener) Open(b Binding, sealed []byte) ([]byte, error) {
	if len(sealed) != o.SealedSize() {
		return nil, fmt.Errorf("open: %w: %d bytes, the run's envelopes have %d", ErrEnvelope, len(sealed), o.SealedSize())
	}
	h, err := ParseHeader(sealed)
	if err != nil {
		return nil, fmt.Errorf("open: %w", err)
	}
	k, ok := o.keys[h.KeyID]
	if !ok {
		return nil, fmt.Errorf("open: %w %d", ErrUnknownKey, h.KeyID)
	}
	aad, err := appendAAD(make([]byte, 0, HeaderSize+12+len(b.Run)), sealed[:HeaderSize], b)
	if err != nil {
		return nil, err
	}
	enc := sealed[HeaderSize : HeaderSize+encapsulatedKeySize]
	ctx, err := hpke.NewRecipient(enc, k.sk, k.suite.kdf, k.suite.aead, hpkeInfo)
	if err != nil {
		return nil, fmt.Errorf("open: %w: %v", ErrOpen, err)
	}
	padded, err := ctx.Open(aad, sealed[HeaderSize+encapsulatedKeySize:])
	if err != nil {
		return nil, fmt.Errorf("open: %w for run %q round %d with key %d", ErrOpen, b.Run, b.Round, h.KeyID)
	}
	return unpad(padded)
}

// unpad removes the padding report || 0x80 || 0x00...: it strips the
// trailing zeros and then exactly one 0x80.
func unpad(padded []byte) ([]byte, error) {
	i := len(padded) - 1
	for i >= 0 && padded[i] == 0 {
		i--
	}
	if i < 0 || padded[i] != 0x80 {
		return nil, fmt.Errorf("open: %w: padding marker missing", ErrEnvelope)
	}
	return padded[:i], nil
}
