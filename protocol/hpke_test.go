package protocol

import (
	"bytes"
	"crypto/ecdh"
	"crypto/hpke"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/shuffledp/shuffledp/randomizer"
)

// testKeys returns n fresh keys numbered 1..n.
func testKeys(t testing.TB, n int) []ReceiverKey {
	t.Helper()
	keys := make([]ReceiverKey, n)
	for i := range keys {
		k, err := GenerateKey(uint8(i + 1))
		if err != nil {
			t.Fatal(err)
		}
		keys[i] = k
	}
	return keys
}

func newPair(t testing.TB, key ReceiverKey, size int) (*HPKESealer, *HPKEOpener) {
	t.Helper()
	s, err := NewHPKESealer(key.Config, size)
	if err != nil {
		t.Fatal(err)
	}
	o, err := NewHPKEOpener(size, key)
	if err != nil {
		t.Fatal(err)
	}
	return s, o
}

var (
	_ Sealer = (*HPKESealer)(nil)
	_ Opener = (*HPKEOpener)(nil)
)

// TestHPKERandomizerReports: for every randomizer, real reports seal to
// exactly ReportSize + Overhead bytes (the length client.New and the
// shuffler check), all of one length, and open to the same bytes.
func TestHPKERandomizerReports(t *testing.T) {
	key := testKeys(t, 1)[0]
	b := Binding{Run: "run-1", Round: 7}
	for _, name := range randomizer.Names {
		dim := 50
		if name == "rr" {
			dim = 1
		}
		r, err := randomizer.New(name, randomizer.Config{Eps0: 2, Dim: dim, Radius: 1, Sigma: 1})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		s, o := newPair(t, key, r.ReportSize())
		src := randomizer.NewSeededSource(1) // simulation randomness: test only
		x := make([]float64, dim)
		if name == "rr" || name == "krr" {
			x[0] = 1
		}
		for i := range 20 {
			rep, err := r.Randomize(x, src)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			sealed, err := s.Seal(b, rep)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if want := r.ReportSize() + s.Overhead(); len(sealed) != want || len(sealed) != s.SealedSize() || len(sealed) != o.SealedSize() {
				t.Fatalf("%s report %d: sealed %d bytes, want %d", name, i, len(sealed), want)
			}
			got, err := o.Open(b, sealed)
			if err != nil {
				t.Fatalf("%s report %d: %v", name, i, err)
			}
			if !bytes.Equal(got, rep) {
				t.Fatalf("%s report %d: opened %x, sealed %x", name, i, got, rep)
			}
		}
	}
}

// TestHPKEPadding: reports of every length up to the report size, ending
// in zeros or in the marker byte, seal to one length and open exactly;
// a longer report is refused.
func TestHPKEPadding(t *testing.T) {
	const size = 12
	s, o := newPair(t, testKeys(t, 1)[0], size)
	b := Binding{Run: "r", Round: 1}
	var reports [][]byte
	for n := 0; n <= size; n++ {
		for _, fill := range []byte{0x00, 0x80, 0xff, 0x01} {
			rep := bytes.Repeat([]byte{fill}, n)
			reports = append(reports, rep)
			if n > 0 {
				tail := append(bytes.Repeat([]byte{0x42}, n-1), fill)
				reports = append(reports, tail)
			}
		}
	}
	for _, rep := range reports {
		sealed, err := s.Seal(b, rep)
		if err != nil {
			t.Fatalf("%x: %v", rep, err)
		}
		if len(sealed) != size+HPKEOverhead {
			t.Fatalf("%x: sealed %d bytes, want %d", rep, len(sealed), size+HPKEOverhead)
		}
		got, err := o.Open(b, sealed)
		if err != nil || !bytes.Equal(got, rep) || len(got) != len(rep) {
			t.Fatalf("%x: opened %x, %v", rep, got, err)
		}
	}
	if _, err := s.Seal(b, make([]byte, size+1)); err == nil {
		t.Error("a report longer than the report size sealed")
	}
}

func TestUnpad(t *testing.T) {
	for _, tc := range []struct {
		in, want []byte
		ok       bool
	}{
		{[]byte{0x80}, []byte{}, true},
		{[]byte{0x80, 0, 0}, []byte{}, true},
		{[]byte{0, 0x80, 0}, []byte{0}, true},
		{[]byte{0x80, 0x80}, []byte{0x80}, true},
		{[]byte{1, 2, 0x80}, []byte{1, 2}, true},
		{[]byte{}, nil, false},
		{[]byte{0, 0, 0}, nil, false},
		{[]byte{1, 2, 3}, nil, false},
		{[]byte{0x80, 0x01, 0}, nil, false},
	} {
		got, err := unpad(tc.in)
		if tc.ok != (err == nil) || (tc.ok && !bytes.Equal(got, tc.want)) {
			t.Errorf("unpad(%x) = %x, %v; want %x, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrEnvelope) {
			t.Errorf("unpad(%x): %v is not ErrEnvelope", tc.in, err)
		}
	}
}

// TestHPKETamper: flipping any bit of any byte of an envelope makes it
// fail to open: the version (ErrEnvelope), the key ID (ErrUnknownKey, or
// ErrOpen when the opener also holds the other ID), the report ID, the
// encapsulated key and the ciphertext (ErrOpen). So does a truncated or
// extended envelope (ErrEnvelope).
func TestHPKETamper(t *testing.T) {
	keys := testKeys(t, 1)
	other, err := GenerateKey(3) // 1 with bit 1 flipped
	if err != nil {
		t.Fatal(err)
	}
	keys = append(keys, other)
	const size = 5
	s, err := NewHPKESealer(keys[0].Config, size)
	if err != nil {
		t.Fatal(err)
	}
	otherKeyTried := false
	one, err := NewHPKEOpener(size, keys[0])
	if err != nil {
		t.Fatal(err)
	}
	both, err := NewHPKEOpener(size, keys...)
	if err != nil {
		t.Fatal(err)
	}
	b := Binding{Run: "run", Round: 3}
	sealed, err := s.Seal(b, []byte("hello"))
	if err != nil {
		t.Fatal(err)
	}
	field := func(i int) string {
		switch {
		case i == 0:
			return "version"
		case i == 1:
			return "key id"
		case i < HeaderSize:
			return "report id"
		case i < HeaderSize+encapsulatedKeySize:
			return "enc"
		default:
			return "ciphertext"
		}
	}
	for i := range sealed {
		for bit := range 8 {
			bad := bytes.Clone(sealed)
			bad[i] ^= 1 << bit
			for name, o := range map[string]*HPKEOpener{"one key": one, "both keys": both} {
				got, err := o.Open(b, bad)
				if err == nil {
					t.Fatalf("%s: byte %d (%s) bit %d flipped: opened %x", name, i, field(i), bit, got)
				}
				var want error
				switch {
				case i == 0:
					want = ErrEnvelope
				case i == 1 && name == "one key":
					want = ErrUnknownKey
				case i == 1 && bad[1] != 3:
					want = ErrUnknownKey
				case i == 1:
					otherKeyTried = true
					want = ErrOpen
				default:
					want = ErrOpen
				}
				if !errors.Is(err, want) {
					t.Fatalf("%s: byte %d (%s) bit %d flipped: %v, want %v", name, i, field(i), bit, err, want)
				}
			}
		}
	}
	if !otherKeyTried {
		t.Error("no flip of the key id named the opener's other key")
	}
	for _, bad := range [][]byte{sealed[:len(sealed)-1], append(bytes.Clone(sealed), 0), nil, sealed[:HeaderSize]} {
		if _, err := one.Open(b, bad); !errors.Is(err, ErrEnvelope) {
			t.Errorf("%d-byte envelope: %v, want ErrEnvelope", len(bad), err)
		}
	}
	if got, err := one.Open(b, sealed); err != nil || string(got) != "hello" {
		t.Fatalf("untampered envelope: %q, %v", got, err)
	}
}

// TestHPKEBinding: a report sealed for (run, round, key) opens for no
// other run, round or key, including runs that are prefixes of each other.
func TestHPKEBinding(t *testing.T) {
	keys := testKeys(t, 2)
	const size = 4
	s, o := newPair(t, keys[0], size)
	b := Binding{Run: "run", Round: 3}
	sealed, err := s.Seal(b, []byte{1, 2, 3, 4})
	if err != nil {
		t.Fatal(err)
	}
	for _, other := range []Binding{
		{Run: "run", Round: 4}, {Run: "run", Round: 2}, {Run: "run", Round: -3}, {Run: "run", Round: 3 + 1<<32},
		{Run: "Run", Round: 3}, {Run: "ru", Round: 3}, {Run: "run\x00", Round: 3}, {Run: "", Round: 3},
		{Run: "run2", Round: 3}, {Run: "r", Round: 0},
	} {
		if got, err := o.Open(other, sealed); !errors.Is(err, ErrOpen) {
			t.Errorf("sealed for %+v, opened for %+v: %x, %v; want ErrOpen", b, other, got, err)
		}
	}
	// Another server key under the same ID: decapsulation gives another
	// shared secret.
	impostor, err := GenerateKey(keys[0].Config.ID)
	if err != nil {
		t.Fatal(err)
	}
	wrong, err := NewHPKEOpener(size, impostor)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := wrong.Open(b, sealed); !errors.Is(err, ErrOpen) {
		t.Errorf("opened with another private key under the same id: %v, want ErrOpen", err)
	}
	// A key the opener does not hold is refused by ID.
	retired, err := NewHPKEOpener(size, keys[1])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := retired.Open(b, sealed); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("opener without key %d: %v, want ErrUnknownKey", keys[0].Config.ID, err)
	}
	// An opener for another report size refuses the length.
	other, err := NewHPKEOpener(size+1, keys[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Open(b, sealed); !errors.Is(err, ErrEnvelope) {
		t.Errorf("opener for another report size: %v, want ErrEnvelope", err)
	}
	if got, err := o.Open(b, sealed); err != nil || !bytes.Equal(got, []byte{1, 2, 3, 4}) {
		t.Fatalf("right binding: %x, %v", got, err)
	}
}

// TestHPKERotation: an opener holding several keys opens reports sealed
// to each of them (of any supported suite), and an opener built without a
// key refuses its reports.
func TestHPKERotation(t *testing.T) {
	var keys []ReceiverKey
	id := uint8(10)
	for _, kdf := range []uint16{KDFHKDFSHA256, KDFHKDFSHA384, KDFHKDFSHA512} {
		for _, aead := range []uint16{AEADAES128GCM, AEADAES256GCM, AEADChaCha20Poly1305} {
			k, err := generateKey(KeyConfig{ID: id, KEM: KEMX25519HKDFSHA256, KDF: kdf, AEAD: aead})
			if err != nil {
				t.Fatal(err)
			}
			keys = append(keys, k)
			id++
		}
	}
	const size = 9
	o, err := NewHPKEOpener(size, keys...)
	if err != nil {
		t.Fatal(err)
	}
	after, err := NewHPKEOpener(size, keys[1:]...) // key 10 retired
	if err != nil {
		t.Fatal(err)
	}
	b := Binding{Run: "rotate", Round: 1}
	for i, k := range keys {
		s, err := NewHPKESealer(k.Config, size)
		if err != nil {
			t.Fatal(err)
		}
		if s.KeyID() != k.Config.ID {
			t.Fatalf("sealer key id %d, config %d", s.KeyID(), k.Config.ID)
		}
		rep := []byte(fmt.Sprintf("key %d", k.Config.ID))
		sealed, err := s.Seal(b, rep)
		if err != nil {
			t.Fatal(err)
		}
		if len(sealed) != size+HPKEOverhead {
			t.Fatalf("suite kdf 0x%04x aead 0x%04x: %d bytes, want %d", k.Config.KDF, k.Config.AEAD, len(sealed), size+HPKEOverhead)
		}
		if h, err := ParseHeader(sealed); err != nil || h.KeyID != k.Config.ID || h.Version != EnvelopeVersion {
			t.Fatalf("header %+v, %v", h, err)
		}
		if got, err := o.Open(b, sealed); err != nil || !bytes.Equal(got, rep) {
			t.Fatalf("key %d: %q, %v", k.Config.ID, got, err)
		}
		_, err = after.Open(b, sealed)
		if i == 0 && !errors.Is(err, ErrUnknownKey) {
			t.Errorf("retired key: %v, want ErrUnknownKey", err)
		}
		if i > 0 && err != nil {
			t.Errorf("key %d after rotation: %v", k.Config.ID, err)
		}
	}
	if _, err := NewHPKEOpener(size, keys[0], keys[0]); !errors.Is(err, ErrKeyConfig) {
		t.Errorf("duplicate key id: %v, want ErrKeyConfig", err)
	}
	if _, err := NewHPKEOpener(size); !errors.Is(err, ErrKeyConfig) {
		t.Errorf("no keys: %v, want ErrKeyConfig", err)
	}
}

// TestHPKEReportID: every seal draws a fresh report ID, ReportID reads it
// from the clear header, and a replayed envelope (the same bytes again) is
// detected by its ID without opening it.
func TestHPKEReportID(t *testing.T) {
	s, o := newPair(t, testKeys(t, 1)[0], 3)
	b := Binding{Run: "r", Round: 1}
	seen := make(map[[ReportIDSize]byte]bool)
	var first []byte
	for i := range 2000 {
		sealed, err := s.Seal(b, []byte{1, 2, 3}) // identical reports
		if err != nil {
			t.Fatal(err)
		}
		id, err := ReportID(sealed)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(id[:], sealed[2:HeaderSize]) {
			t.Fatalf("ReportID %x, header bytes %x", id, sealed[2:HeaderSize])
		}
		if seen[id] {
			t.Fatalf("report %d: report id %x repeated", i, id)
		}
		seen[id] = true
		if i == 0 {
			first = sealed
		}
	}
	replay := bytes.Clone(first)
	id, err := ReportID(replay)
	if err != nil || !seen[id] {
		t.Fatalf("replayed envelope: id %x seen %v, %v", id, seen[id], err)
	}
	// The replay itself still opens (it is genuine): rejecting it is the
	// shuffler's job, by ID.
	if _, err := o.Open(b, replay); err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][]byte{nil, make([]byte, HeaderSize-1), append([]byte{2}, make([]byte, HeaderSize)...)} {
		if _, err := ReportID(bad); !errors.Is(err, ErrEnvelope) {
			t.Errorf("ReportID(%x): %v, want ErrEnvelope", bad, err)
		}
	}
}

// TestHPKEEnvelopeLayout decodes an envelope by the documented layout
// alone and opens it with crypto/hpke directly, with the documented info
// and associated data built by hand: the documentation is the format.
func TestHPKEEnvelopeLayout(t *testing.T) {
	key := testKeys(t, 1)[0]
	const size = 6
	s, _ := newPair(t, key, size)
	b := Binding{Run: "layout-run", Round: 0x0102030405060708}
	rep := []byte{0xde, 0xad}
	sealed, err := s.Seal(b, rep)
	if err != nil {
		t.Fatal(err)
	}
	if len(sealed) != size+67 {
		t.Fatalf("%d bytes, want L+67 = %d", len(sealed), size+67)
	}
	if sealed[0] != 1 || sealed[1] != key.Config.ID {
		t.Fatalf("version %d key id %d", sealed[0], sealed[1])
	}
	header, enc, ct := sealed[:18], sealed[18:50], sealed[50:]
	if len(ct) != size+17 {
		t.Fatalf("ciphertext of %d bytes, want L+17", len(ct))
	}
	aad := append([]byte{}, header...)
	aad = append(aad, 1, 2, 3, 4, 5, 6, 7, 8)
	aad = binary.BigEndian.AppendUint32(aad, uint32(len(b.Run)))
	aad = append(aad, b.Run...)
	sk, err := hpke.DHKEM(ecdh.X25519()).NewPrivateKey(key.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	r, err := hpke.NewRecipient(enc, sk, hpke.HKDFSHA256(), hpke.AES128GCM(), []byte("shuffledp report v1 client->server"))
	if err != nil {
		t.Fatal(err)
	}
	padded, err := r.Open(aad, ct)
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{0xde, 0xad, 0x80, 0, 0, 0, 0}
	if !bytes.Equal(padded, want) {
		t.Fatalf("padded plaintext %x, want %x", padded, want)
	}
}

// TestHPKEConcurrent: one sealer and one opener shared by goroutines (run
// with -race).
func TestHPKEConcurrent(t *testing.T) {
	s, o := newPair(t, testKeys(t, 1)[0], 8)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				b := Binding{Run: "c", Round: int64(g*1000 + i)}
				rep := []byte{byte(g), byte(i)}
				sealed, err := s.Seal(b, rep)
				if err != nil {
					errs <- err
					return
				}
				got, err := o.Open(b, sealed)
				if err != nil || !bytes.Equal(got, rep) {
					errs <- fmt.Errorf("goroutine %d report %d: %x, %v", g, i, got, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestHPKEReportSize(t *testing.T) {
	key := testKeys(t, 1)[0]
	for _, n := range []int{0, -1, maxReportSize + 1} {
		if _, err := NewHPKESealer(key.Config, n); err == nil {
			t.Errorf("sealer with report size %d accepted", n)
		}
		if _, err := NewHPKEOpener(n, key); err == nil {
			t.Errorf("opener with report size %d accepted", n)
		}
	}
}

// FuzzHPKEOpen: Open never panics, and the only envelope it opens is the
// genuine one, to the genuine report.
func FuzzHPKEOpen(f *testing.F) {
	key, err := GenerateKey(1)
	if err != nil {
		f.Fatal(err)
	}
	const size = 4
	s, o := newPair(f, key, size)
	b := Binding{Run: "fuzz", Round: 1}
	rep := []byte{9, 8, 7}
	sealed, err := s.Seal(b, rep)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(sealed, int64(1))
	f.Add(sealed, int64(2))
	f.Add(sealed[:10], int64(1))
	f.Fuzz(func(t *testing.T, env []byte, round int64) {
		got, err := o.Open(Binding{Run: "fuzz", Round: round}, env)
		if err != nil {
			return
		}
		if round != 1 || !bytes.Equal(env, sealed) || !bytes.Equal(got, rep) {
			t.Fatalf("opened %x for round %d to %x", env, round, got)
		}
	})
}
