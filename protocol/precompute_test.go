package protocol

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
)

// TestPrecomputedSeal: envelopes sealed with precomputed sender contexts
// open for their own binding and for no other, every one has its own
// encapsulated key (also under concurrent Seals draining the contexts),
// and Seal falls back to a fresh context once they are used up.
func TestPrecomputedSeal(t *testing.T) {
	key, err := GenerateKey(3)
	if err != nil {
		t.Fatal(err)
	}
	const size, n = 64, 40
	s, o := newPair(t, key, size)
	if got, err := s.Precompute(n); err != nil || got != n {
		t.Fatalf("Precompute(%d) = %d, %v", n, got, err)
	}
	encs := map[string]bool{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range n / 2 { // 4 x 20 = 80 seals: 40 precomputed, 40 fresh
				b := Binding{Run: "pre", Round: int64(g*100 + i)}
				rep := []byte(fmt.Sprintf("report %d %d", g, i))
				env, err := s.Seal(b, rep)
				if err != nil {
					errs <- err
					return
				}
				got, err := o.Open(b, env)
				if err != nil || !bytes.Equal(got, rep) {
					errs <- fmt.Errorf("round %d: opened %q, %v; want %q", b.Round, got, err, rep)
					return
				}
				if _, err := o.Open(Binding{Run: "pre", Round: b.Round + 1}, env); err == nil {
					errs <- fmt.Errorf("round %d: the envelope opened for round %d", b.Round, b.Round+1)
					return
				}
				mu.Lock()
				enc := string(env[HeaderSize : HeaderSize+encapsulatedKeySize])
				if encs[enc] {
					errs <- fmt.Errorf("round %d: encapsulated key %x used twice", b.Round, enc)
				}
				encs[enc] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if len(encs) != 2*n {
		t.Fatalf("%d distinct encapsulated keys for %d envelopes", len(encs), 2*n)
	}
	if got := s.Precomputed(); got != 0 {
		t.Fatalf("%d precomputed contexts left after %d seals", got, 2*n)
	}
	if got, err := s.Precompute(-1); err != nil || got != 0 {
		t.Fatalf("Precompute(-1) = %d, %v", got, err)
	}
}

// BenchmarkSealPrecomputed: the critical-path cost of a seal when its
// sender context was set up ahead ("precomputed", Precompute outside the
// timer) against one that sets up its own ("fresh"), and the cost of
// Precompute per context ("precompute").
func BenchmarkSealPrecomputed(b *testing.B) {
	key, err := GenerateKey(1)
	if err != nil {
		b.Fatal(err)
	}
	bind := Binding{Run: "bench-run", Round: 1}
	for _, size := range benchSizes[:2] {
		rep := make([]byte, size)
		rep[0] = 1
		s, err := NewHPKESealer(key.Config, size)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("fresh/bytes=%d", size), func(b *testing.B) {
			for b.Loop() {
				if _, err := s.Seal(bind, rep); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("precomputed/bytes=%d", size), func(b *testing.B) {
			const batch = 1000
			for i := 0; b.Loop(); i++ {
				if i%batch == 0 {
					b.StopTimer()
					if _, err := s.Precompute(batch); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
				}
				if _, err := s.Seal(bind, rep); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("precompute/bytes=%d", size), func(b *testing.B) {
			for b.Loop() {
				if _, err := s.Precompute(1); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				if _, err := s.Seal(bind, rep); err != nil { // drain it
					b.Fatal(err)
				}
				b.StartTimer()
			}
		})
	}
}
