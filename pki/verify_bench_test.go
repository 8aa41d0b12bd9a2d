package pki

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"testing"
)

// BenchmarkVerify: one token check per op, as the shuffler does per
// report: Enroller.Verify (keyed HMAC states reused) against a fresh HMAC
// per check (hmac.New with the secret each time, as before the reuse).
//
//	go test ./pki -run '^$' -bench Verify -count 5
func BenchmarkVerify(b *testing.B) {
	secret := make([]byte, secretSize)
	e, err := NewEnroller(secret)
	if err != nil {
		b.Fatal(err)
	}
	tok := e.Token(12345)
	b.Run("reused", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if !e.Verify(12345, tok) {
				b.Fatal("token refused")
			}
		}
	})
	b.Run("fresh", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			m := hmac.New(sha256.New, secret)
			m.Write([]byte(tokenLabel))
			var c [8]byte
			binary.BigEndian.PutUint64(c[:], 12345)
			m.Write(c[:])
			if !hmac.Equal(m.Sum(nil), tok) {
				b.Fatal("token refused")
			}
		}
	})
}

// TestVerifyReusedStates: tokens checked through reused HMAC states, many
// clients in turn and concurrently, are each client's own (a state reused
// after another client's check carries nothing of it).
func TestVerifyReusedStates(t *testing.T) {
	e, err := NewEnroller([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	fresh := func(c int64) []byte {
		m := hmac.New(sha256.New, e.secret)
		m.Write([]byte(tokenLabel))
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], uint64(c))
		m.Write(b[:])
		return m.Sum(nil)
	}
	done := make(chan error, 4)
	for g := range 4 {
		go func() {
			for c := int64(g); c < 2000; c += 4 {
				if !hmac.Equal(e.Token(c), fresh(c)) || !e.Verify(c, fresh(c)) || e.Verify(c, fresh(c+1)) {
					done <- fmt.Errorf("client %d: token mismatch through reused HMAC states", c)
					return
				}
			}
			done <- nil
		}()
	}
	for range 4 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

// A token check allocates nothing once the pool holds a state (the shuffler
// checks one per report): the message and the sum live in the pooled
// macState. A negative client index is refused.
func TestVerifyAllocatesNothing(t *testing.T) {
	e, err := NewEnroller([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	tok := e.Token(7)
	if !e.Verify(7, tok) || e.Verify(-1, tok) || e.Verify(8, tok) {
		t.Fatal("Verify: wrong answer")
	}
	if a := testing.AllocsPerRun(200, func() { e.Verify(7, tok) }); a != 0 {
		t.Errorf("Verify allocates %v times per check, want 0", a)
	}
}
