package protocol

import (
	"bytes"
	"crypto/ecdh"
	"crypto/hpke"
	"encoding/binary"
	"errors"
	"fmt"
)

// HPKE algorithm identifiers (RFC 9180, Section 7) that a KeyConfig may
// name. The KEM is always DHKEM(X25519, HKDF-SHA256), so every sealed
// report of every supported suite has the same length (a 32-byte
// encapsulated key and a 16-byte AEAD tag); the KDF and the AEAD may vary.
const (
	KEMX25519HKDFSHA256 uint16 = 0x0020

	KDFHKDFSHA256 uint16 = 0x0001
	KDFHKDFSHA384 uint16 = 0x0002
	KDFHKDFSHA512 uint16 = 0x0003

	AEADAES128GCM        uint16 = 0x0001
	AEADAES256GCM        uint16 = 0x0002
	AEADChaCha20Poly1305 uint16 = 0x0003
)

// Sizes fixed by the KEM and the AEADs a KeyConfig may name: Nenc of
// DHKEM(X25519, HKDF-SHA256) and Nt of AES-GCM and ChaCha20-Poly1305
// (RFC 9180, Sections 7.1 and 7.3).
const (
	encapsulatedKeySize = 32
	aeadTagSize         = 16
)

// ErrKeyConfig reports an invalid or unsupported key configuration.
var ErrKeyConfig = errors.New("invalid key config")

// KeyConfig is the server's public HPKE configuration for sealing
// reports, numbered so that keys can rotate: a client seals with the
// config the server currently publishes and writes its ID into the
// envelope; the server keeps the private keys of the configs still in use
// (HPKEOpener) and refuses any other ID. It follows the HpkeConfig of the
// IETF DAP draft (draft-ietf-ppm-dap, "HPKE Configuration Request").
//
// The key ID is visible to the shuffler and the server, so a server that
// handed different clients different configs could tell their reports
// apart after the shuffle (key partitioning). Every sampled client of a
// round must therefore seal to the same config, received through the
// shuffler like the Model (or another channel all clients share), and
// the shuffler should refuse a round whose reports name different keys.
//
// The zero KDF and AEAD are not valid; GenerateKey fills in
// X25519 / HKDF-SHA256 / AES-128-GCM.
type KeyConfig struct {
	// ID names the key; it travels in the clear in every envelope and is
	// bound into the AEAD's associated data.
	ID uint8 `json:"id"`
	// KEM, KDF and AEAD are the RFC 9180 algorithm identifiers of the
	// ciphersuite (KEM must be KEMX25519HKDFSHA256).
	KEM  uint16 `json:"kem_id"`
	KDF  uint16 `json:"kdf_id"`
	AEAD uint16 `json:"aead_id"`
	// PublicKey is the server's public key, SerializePublicKey of RFC
	// 9180 (32 bytes for X25519).
	PublicKey []byte `json:"public_key"`
}

// suite is a KeyConfig's ciphersuite, instantiated.
type suite struct {
	kem  hpke.KEM
	kdf  hpke.KDF
	aead hpke.AEAD
}

// suite checks the config's algorithm identifiers and returns them
// instantiated.
func (c *KeyConfig) suite() (suite, error) {
	if c.KEM != KEMX25519HKDFSHA256 {
		return suite{}, fmt.Errorf("%w %d: kem-id 0x%04x unsupported (want 0x%04x, DHKEM(X25519, HKDF-SHA256))", ErrKeyConfig, c.ID, c.KEM, KEMX25519HKDFSHA256)
	}
	var s suite
	s.kem = hpke.DHKEM(ecdh.X25519())
	switch c.KDF {
	case KDFHKDFSHA256:
		s.kdf = hpke.HKDFSHA256()
	case KDFHKDFSHA384:
		s.kdf = hpke.HKDFSHA384()
	case KDFHKDFSHA512:
		s.kdf = hpke.HKDFSHA512()
	default:
		return suite{}, fmt.Errorf("%w %d: kdf-id 0x%04x unsupported (want HKDF-SHA256, -384 or -512)", ErrKeyConfig, c.ID, c.KDF)
	}
	switch c.AEAD {
	case AEADAES128GCM:
		s.aead = hpke.AES128GCM()
	case AEADAES256GCM:
		s.aead = hpke.AES256GCM()
	case AEADChaCha20Poly1305:
		s.aead = hpke.ChaCha20Poly1305()
	default:
		return suite{}, fmt.Errorf("%w %d: aead-id 0x%04x unsupported (want AES-128-GCM, AES-256-GCM or ChaCha20-Poly1305)", ErrKeyConfig, c.ID, c.AEAD)
	}
	return s, nil
}

// publicKey validates the config and returns its suite and public key.
func (c *KeyConfig) publicKey() (suite, hpke.PublicKey, error) {
	s, err := c.suite()
	if err != nil {
		return suite{}, nil, err
	}
	pk, err := s.kem.NewPublicKey(c.PublicKey)
	if err != nil {
		return suite{}, nil, fmt.Errorf("%w %d: public key: %v", ErrKeyConfig, c.ID, err)
	}
	return s, pk, nil
}

// Validate returns an error (wrapping ErrKeyConfig) if the config names an
// unsupported algorithm or its public key does not parse.
func (c KeyConfig) Validate() error {
	_, _, err := c.publicKey()
	return err
}

// MarshalBinary encodes the config as the DAP draft's HpkeConfig does:
// ID (1 byte), KEM, KDF, AEAD (2 bytes each, big endian), then the public
// key with a 2-byte big-endian length prefix.
func (c KeyConfig) MarshalBinary() ([]byte, error) {
	if len(c.PublicKey) > 0xFFFF {
		return nil, fmt.Errorf("%w %d: public key of %d bytes", ErrKeyConfig, c.ID, len(c.PublicKey))
	}
	return c.append(make([]byte, 0, 9+len(c.PublicKey))), nil
}

func (c *KeyConfig) append(b []byte) []byte {
	b = append(b, c.ID)
	b = binary.BigEndian.AppendUint16(b, c.KEM)
	b = binary.BigEndian.AppendUint16(b, c.KDF)
	b = binary.BigEndian.AppendUint16(b, c.AEAD)
	b = binary.BigEndian.AppendUint16(b, uint16(len(c.PublicKey)))
	return append(b, c.PublicKey...)
}

// UnmarshalBinary decodes the encoding of MarshalBinary and validates the
// result; trailing bytes are an error.
func (c *KeyConfig) UnmarshalBinary(b []byte) error {
	d, rest, err := parseKeyConfig(b)
	if err != nil {
		return err
	}
	if len(rest) != 0 {
		return fmt.Errorf("%w: %d trailing bytes", ErrKeyConfig, len(rest))
	}
	if err := d.Validate(); err != nil {
		return err
	}
	*c = d
	return nil
}

func parseKeyConfig(b []byte) (KeyConfig, []byte, error) {
	if len(b) < 9 {
		return KeyConfig{}, nil, fmt.Errorf("%w: %d bytes, shorter than the 9-byte header", ErrKeyConfig, len(b))
	}
	c := KeyConfig{
		ID:   b[0],
		KEM:  binary.BigEndian.Uint16(b[1:]),
		KDF:  binary.BigEndian.Uint16(b[3:]),
		AEAD: binary.BigEndian.Uint16(b[5:]),
	}
	n := int(binary.BigEndian.Uint16(b[7:]))
	if len(b)-9 < n {
		return KeyConfig{}, nil, fmt.Errorf("%w %d: public key of %d bytes announced, %d present", ErrKeyConfig, c.ID, n, len(b)-9)
	}
	c.PublicKey = bytes.Clone(b[9 : 9+n])
	return c, b[9+n:], nil
}

// ReceiverKey is one of the server's key pairs: the public KeyConfig it
// publishes and the matching private key. It is secret; its String method
// prints the config only.
type ReceiverKey struct {
	Config KeyConfig `json:"config"`
	// PrivateKey is SerializePrivateKey of RFC 9180 (32 bytes for X25519).
	PrivateKey []byte `json:"private_key"`
}

// GenerateKey returns a fresh key pair numbered id for the suite
// X25519 / HKDF-SHA256 / AES-128-GCM. The private key comes from
// crypto/rand (through crypto/hpke's KEM.GenerateKey).
func GenerateKey(id uint8) (ReceiverKey, error) {
	return generateKey(KeyConfig{ID: id, KEM: KEMX25519HKDFSHA256, KDF: KDFHKDFSHA256, AEAD: AEADAES128GCM})
}

func generateKey(c KeyConfig) (ReceiverKey, error) {
	s, err := c.suite()
	if err != nil {
		return ReceiverKey{}, err
	}
	sk, err := s.kem.GenerateKey()
	if err != nil {
		return ReceiverKey{}, fmt.Errorf("key %d: %w", c.ID, err)
	}
	priv, err := sk.Bytes()
	if err != nil {
		return ReceiverKey{}, fmt.Errorf("key %d: %w", c.ID, err)
	}
	c.PublicKey = sk.PublicKey().Bytes()
	return ReceiverKey{Config: c, PrivateKey: priv}, nil
}

// privateKey validates the key pair (the private key parses and its public
// key is the config's) and returns the suite and the private key.
func (k *ReceiverKey) privateKey() (suite, hpke.PrivateKey, error) {
	s, err := k.Config.suite()
	if err != nil {
		return suite{}, nil, err
	}
	sk, err := s.kem.NewPrivateKey(k.PrivateKey)
	if err != nil {
		return suite{}, nil, fmt.Errorf("%w %d: private key: %v", ErrKeyConfig, k.Config.ID, err)
	}
	if !bytes.Equal(sk.PublicKey().Bytes(), k.Config.PublicKey) {
		return suite{}, nil, fmt.Errorf("%w %d: the private key does not match the config's public key", ErrKeyConfig, k.Config.ID)
	}
	return s, sk, nil
}

// Validate returns an error (wrapping ErrKeyConfig) if the config is
// invalid or the private key does not match its public key.
func (k ReceiverKey) Validate() error {
	_, _, err := k.privateKey()
	return err
}

// MarshalBinary encodes the key pair: the config as KeyConfig.MarshalBinary
// encodes it, then the private key with a 2-byte big-endian length prefix.
func (k ReceiverKey) MarshalBinary() ([]byte, error) {
	if len(k.Config.PublicKey) > 0xFFFF || len(k.PrivateKey) > 0xFFFF {
		return nil, fmt.Errorf("%w %d: key too long", ErrKeyConfig, k.Config.ID)
	}
	b := k.Config.append(make([]byte, 0, 11+len(k.Config.PublicKey)+len(k.PrivateKey)))
	b = binary.BigEndian.AppendUint16(b, uint16(len(k.PrivateKey)))
	return append(b, k.PrivateKey...), nil
}

// UnmarshalBinary decodes the encoding of MarshalBinary and validates the
// result (Validate); trailing bytes are an error.
func (k *ReceiverKey) UnmarshalBinary(b []byte) error {
	c, rest, err := parseKeyConfig(b)
	if err != nil {
		return err
	}
	if len(rest) < 2 {
		return fmt.Errorf("%w %d: private key length missing", ErrKeyConfig, c.ID)
	}
	n := int(binary.BigEndian.Uint16(rest))
	if len(rest)-2 != n {
		return fmt.Errorf("%w %d: private key of %d bytes announced, %d present", ErrKeyConfig, c.ID, n, len(rest)-2)
	}
	d := ReceiverKey{Config: c, PrivateKey: bytes.Clone(rest[2:])}
	if err := d.Validate(); err != nil {
		return err
	}
	*k = d
	return nil
}

// String prints the key's config, never its private key.
func (k ReceiverKey) String() string {
	return fmt.Sprintf("ReceiverKey{id %d, kem 0x%04x, kdf 0x%04x, aead 0x%04x, public %x, private key redacted}",
		k.Config.ID, k.Config.KEM, k.Config.KDF, k.Config.AEAD, k.Config.PublicKey)
}

// GoString is String, so that %#v does not print the private key either.
func (k ReceiverKey) GoString() string { return k.String() }
