package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestKeySerialisation: a key pair written in binary or JSON (as a state
// directory would keep it) and read back opens the reports sealed to the
// config read back from the public encoding alone.
func TestKeySerialisation(t *testing.T) {
	key, err := GenerateKey(42)
	if err != nil {
		t.Fatal(err)
	}
	if c := key.Config; c.ID != 42 || c.KEM != 0x0020 || c.KDF != 0x0001 || c.AEAD != 0x0001 || len(c.PublicKey) != 32 || len(key.PrivateKey) != 32 {
		t.Fatalf("generated %v with a %d-byte private key", key, len(key.PrivateKey))
	}
	pub, err := key.Config.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if want := append([]byte{42, 0x00, 0x20, 0x00, 0x01, 0x00, 0x01, 0x00, 32}, key.Config.PublicKey...); !bytes.Equal(pub, want) {
		t.Fatalf("config encoding %x, want %x", pub, want)
	}
	var cfg KeyConfig
	if err := cfg.UnmarshalBinary(pub); err != nil {
		t.Fatal(err)
	}
	priv, err := key.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var fromBinary ReceiverKey
	if err := fromBinary.UnmarshalBinary(priv); err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(key)
	if err != nil {
		t.Fatal(err)
	}
	var fromJSON ReceiverKey
	if err := json.Unmarshal(js, &fromJSON); err != nil {
		t.Fatal(err)
	}
	if err := fromJSON.Validate(); err != nil {
		t.Fatal(err)
	}
	s, err := NewHPKESealer(cfg, 8)
	if err != nil {
		t.Fatal(err)
	}
	b := Binding{Run: "persist", Round: 5}
	sealed, err := s.Seal(b, []byte("report"))
	if err != nil {
		t.Fatal(err)
	}
	for name, k := range map[string]ReceiverKey{"binary": fromBinary, "json": fromJSON} {
		o, err := NewHPKEOpener(8, k)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got, err := o.Open(b, sealed); err != nil || string(got) != "report" {
			t.Errorf("%s: opened %q, %v", name, got, err)
		}
	}
}

func TestKeyConfigInvalid(t *testing.T) {
	key, err := GenerateKey(1)
	if err != nil {
		t.Fatal(err)
	}
	other, err := GenerateKey(1)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		mutate func(*ReceiverKey)
		want   string
	}{
		{"kem", func(k *ReceiverKey) { k.Config.KEM = 0x0010 }, "kem-id"},
		{"kdf", func(k *ReceiverKey) { k.Config.KDF = 0 }, "kdf-id"},
		{"aead", func(k *ReceiverKey) { k.Config.AEAD = 0xFFFF }, "aead-id"},
		{"short public key", func(k *ReceiverKey) { k.Config.PublicKey = k.Config.PublicKey[:31] }, "public key"},
		{"short private key", func(k *ReceiverKey) { k.PrivateKey = k.PrivateKey[:31] }, "private key"},
		{"mismatched pair", func(k *ReceiverKey) { k.PrivateKey = other.PrivateKey }, "does not match"},
	} {
		k := key
		k.Config.PublicKey = bytes.Clone(key.Config.PublicKey)
		k.PrivateKey = bytes.Clone(key.PrivateKey)
		tc.mutate(&k)
		err := k.Validate()
		if !errors.Is(err, ErrKeyConfig) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrKeyConfig naming %q", tc.name, err, tc.want)
		}
		if _, err := NewHPKEOpener(4, k); !errors.Is(err, ErrKeyConfig) {
			t.Errorf("%s: opener accepted the key: %v", tc.name, err)
		}
		if tc.name != "short private key" && tc.name != "mismatched pair" {
			if _, err := NewHPKESealer(k.Config, 4); !errors.Is(err, ErrKeyConfig) {
				t.Errorf("%s: sealer accepted the config: %v", tc.name, err)
			}
		}
		if enc, err := k.MarshalBinary(); err == nil {
			var back ReceiverKey
			if err := back.UnmarshalBinary(enc); !errors.Is(err, ErrKeyConfig) {
				t.Errorf("%s: decoding accepted the key: %v", tc.name, err)
			}
		}
	}
}

// TestKeyEncodingTruncated: every truncation of the encodings, and any
// trailing byte, is refused.
func TestKeyEncodingTruncated(t *testing.T) {
	key, err := GenerateKey(7)
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := key.Config.MarshalBinary()
	priv, _ := key.MarshalBinary()
	for n := range len(pub) {
		var c KeyConfig
		if err := c.UnmarshalBinary(pub[:n]); !errors.Is(err, ErrKeyConfig) {
			t.Errorf("config truncated to %d bytes: %v", n, err)
		}
	}
	var c KeyConfig
	if err := c.UnmarshalBinary(append(bytes.Clone(pub), 0)); !errors.Is(err, ErrKeyConfig) {
		t.Errorf("config with a trailing byte: %v", err)
	}
	for n := range len(priv) {
		var k ReceiverKey
		if err := k.UnmarshalBinary(priv[:n]); !errors.Is(err, ErrKeyConfig) {
			t.Errorf("key truncated to %d bytes: %v", n, err)
		}
	}
	var k ReceiverKey
	if err := k.UnmarshalBinary(append(bytes.Clone(priv), 0)); !errors.Is(err, ErrKeyConfig) {
		t.Errorf("key with a trailing byte: %v", err)
	}
}

// TestReceiverKeyRedacted: printing a key pair never prints its private
// key.
func TestReceiverKeyRedacted(t *testing.T) {
	key, err := GenerateKey(3)
	if err != nil {
		t.Fatal(err)
	}
	secret := fmt.Sprintf("%x", key.PrivateKey)
	for _, format := range []string{"%v", "%+v", "%#v", "%s"} {
		if out := fmt.Sprintf(format, key); strings.Contains(out, secret) || !strings.Contains(out, "redacted") {
			t.Errorf("%s prints %q", format, out)
		}
	}
	if out := fmt.Sprintf("%v", &key); strings.Contains(out, secret) {
		t.Errorf("pointer prints %q", out)
	}
}

func TestGenerateKeyFresh(t *testing.T) {
	a, err := GenerateKey(1)
	if err != nil {
		t.Fatal(err)
	}
	b, err := GenerateKey(1)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(a.PrivateKey, b.PrivateKey) || bytes.Equal(a.Config.PublicKey, b.Config.PublicKey) {
		t.Fatal("two generated keys are equal")
	}
}
