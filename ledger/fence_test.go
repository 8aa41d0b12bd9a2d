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

// TestFenceRace races a fenced debit against the advance of its fence, on
// the shared backends, many times: whenever the debit commits, a reader
// that starts once the advance returned finds it (the debit committed
// before the advance, or it would have been fenced). That is what a new
// holder relies on: it reads the run after advancing the fence, so no
// debit of the old holder can land after that read.
func TestFenceRace(t *testing.T) {
	ctx := context.Background()
	for _, b := range sharedBackends {
		t.Run(b.name, func(t *testing.T) {
			target := b.target(t)
			s, other := b.open(t, target), b.open(t, target)
			defer s.Close()
			defer other.Close()
			const run, trials = "race", 24
			fenced, committed := 0, 0
			for k := int64(1); k <= trials; k++ {
				f, err := s.(Fencer).AdvanceFence(ctx, run)
				if err != nil {
					t.Fatal(err)
				}
				l, err := Open(ctx, s, run, Options{Delta: 1e-5, Fence: &f})
				if err != nil {
					t.Fatal(err)
				}
				errc := make(chan error, 1)
				go func() {
					errc <- l.Debit(ctx, k, subsampled, int(subsampled.K), sha256.Sum256([]byte{byte(k)}))
				}()
				if _, err := other.(Fencer).AdvanceFence(ctx, run); err != nil {
					t.Fatal(err)
				}
				es, err := other.Entries(ctx, run)
				if err != nil {
					t.Fatal(err)
				}
				seen := len(es) > 0 && es[len(es)-1].Round == k
				switch err := <-errc; {
				case err == nil:
					committed++
					if !seen {
						t.Fatalf("trial %d: the debit committed after the fence advanced (not in the run read after the advance)", k)
					}
				case errors.Is(err, ErrFenced):
					fenced++
				default:
					t.Fatalf("trial %d: %v", k, err)
				}
			}
			t.Logf("%d trials: %d debits committed before the advance, %d fenced", trials, committed, fenced)
		})
	}
}
