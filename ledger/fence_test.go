package ledger

import (
	"context"
	"crypto/sha256"
	"errors"
	"testing"
)

// TestFencedDebit, on every backend: a writer debits under its fence until
// another writer advances the fence's epoch; after that every debit of
// the first (plain or claiming report ids) fails with ErrFenced and
// writes nothing (no entry, no id), while the new writer debits. A fence
// never taken fences everything; an unfenced ledger is not affected.
func TestFencedDebit(t *testing.T) {
	ctx := context.Background()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			s := b.open(t)
			defer s.Close()
			f, ok := s.(Fencer)
			if !ok {
				t.Fatalf("%T is not a Fencer", s)
			}
			const run = "fenced#shard-1-of-2"
			fa, err := f.AdvanceFence(ctx, run)
			if err != nil {
				t.Fatal(err)
			}
			if fa.Epoch != 1 {
				t.Fatalf("first epoch %d, want 1", fa.Epoch)
			}
			opts := Options{Delta: 1e-5, Fence: &fa}
			a, err := Open(ctx, s, run, opts)
			if err != nil {
				t.Fatal(err)
			}
			ev := subsampled
			if err := a.Debit(ctx, 1, ev, int(ev.K), sha256.Sum256([]byte("a1"))); err != nil {
				t.Fatalf("the holder's debit: %v", err)
			}
			fb, err := f.AdvanceFence(ctx, run)
			if err != nil {
				t.Fatal(err)
			}
			if fb.Epoch != 2 {
				t.Fatalf("second epoch %d, want 2", fb.Epoch)
			}
			// The old holder, unaware, debits its next round: fenced.
			if err := a.Debit(ctx, 2, ev, int(ev.K), sha256.Sum256([]byte("a2"))); !errors.Is(err, ErrFenced) {
				t.Fatalf("the stale holder's debit: %v, want ErrFenced", err)
			}
			ids := [][16]byte{{1}, {2}}
			if _, err := a.DebitClaiming(ctx, 2, ev, 2, sha256.Sum256([]byte("a2c")), ids); !errors.Is(err, ErrFenced) {
				t.Fatalf("the stale holder's claiming debit: %v, want ErrFenced", err)
			}
			opts.Fence = &fb
			bl, err := Open(ctx, s, run, opts)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := bl.DebitClaiming(ctx, 2, ev, 2, sha256.Sum256([]byte("b2")), ids); err != nil {
				t.Fatalf("the new holder's debit: %v", err)
			}
			es, err := s.Entries(ctx, run)
			if err != nil {
				t.Fatal(err)
			}
			if len(es) != 2 || es[0].Digest != sha256.Sum256([]byte("a1")) || es[1].Digest != sha256.Sum256([]byte("b2")) {
				t.Fatalf("entries %+v, want round 1 by the first holder and round 2 by the second", es)
			}
			// A fence nobody took fences every debit.
			never := Fence{Key: "never", Epoch: 1}
			n, err := Open(ctx, s, "never", Options{Delta: 1e-5, Fence: &never})
			if err != nil {
				t.Fatal(err)
			}
			if err := n.Debit(ctx, 1, ev, int(ev.K), sha256.Sum256([]byte("n"))); !errors.Is(err, ErrFenced) {
				t.Fatalf("a debit under a fence never taken: %v, want ErrFenced", err)
			}
			// Without a fence, the same store debits as before.
			u, err := Open(ctx, s, "unfenced", Options{Delta: 1e-5})
			if err != nil {
				t.Fatal(err)
			}
			if err := u.Debit(ctx, 1, ev, int(ev.K), sha256.Sum256([]byte("u"))); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestFenceNeedsFencer: a fenced ledger over a store that cannot fence is
// refused at Open, never silently unfenced.
func TestFenceNeedsFencer(t *testing.T) {
	type plain struct{ Store }
	if _, err := Open(context.Background(), plain{NewMemoryStore()}, "r", Options{Delta: 1e-5, Fence: &Fence{Key: "r", Epoch: 1}}); err == nil {
		t.Fatal("a fenced ledger opened over a store that does not fence")
	}
}
