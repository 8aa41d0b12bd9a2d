package shard

import (
	"context"
	"crypto/sha256"
	"fmt"
	"testing"

	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/ledger"
	"github.com/shuffledp/shuffledp/route"
)

// TestEpsilons: a sharded run's report is every shard's own epsilon (its
// rows priced with its own n_s, k_s) and their maximum; Find names the
// sharded runs of a ledger; a shard with no rows yet has epsilon 0.
func TestEpsilons(t *testing.T) {
	ctx := context.Background()
	store := ledger.NewMemoryStore()
	p, err := Split("e", 30, 6, 3)
	if err != nil {
		t.Fatal(err)
	}
	rounds := []int64{5, 7} // shard 2 has none yet
	for i, n := range rounds {
		part := p.Parts[i]
		l, err := ledger.Open(ctx, store, part.Run, ledger.Options{Delta: 1e-5})
		if err != nil {
			t.Fatal(err)
		}
		ev := event.Round{Randomizer: "rinf", N: part.N(), Reports: part.K, Eps0: 1}.Event()
		for r := range n {
			if err := l.Debit(ctx, r+1, ev, int(part.K), sha256.Sum256(fmt.Appendf(nil, "%d %d", i, r))); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := ledger.Open(ctx, store, "plain", ledger.Options{Delta: 1e-5}); err != nil {
		t.Fatal(err)
	}
	found, err := Find(ctx, store)
	if err != nil || len(found) != 1 || found["e"] != 3 {
		t.Fatalf("Find = %v, %v; want e in 3 shards", found, err)
	}
	r, err := EpsilonsOf(ctx, store, "e", 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range append(rounds, 0) {
		part := p.Parts[i]
		want := 0.0
		if n > 0 {
			g, err := route.Best([]event.Composed{{Event: event.Round{Randomizer: "rinf", N: part.N(), Reports: part.K, Eps0: 1}.Event(), Count: n}}, 1e-5, nil)
			if err != nil {
				t.Fatal(err)
			}
			want = g.Epsilon
		}
		if r.Shards[i].Epsilon != want || r.Shards[i].Rounds != n {
			t.Errorf("shard %d: %d rounds epsilon %v, want %d rounds %v", i, r.Shards[i].Rounds, r.Shards[i].Epsilon, n, want)
		}
	}
	if r.Worst != 1 || r.Epsilon != r.Shards[1].Epsilon || !(r.Epsilon > r.Shards[0].Epsilon) {
		t.Errorf("run epsilon %v at shard %d, want shard 1's %v (the maximum)", r.Epsilon, r.Worst, r.Shards[1].Epsilon)
	}
	if viaPlan, err := Epsilons(ctx, store, p, 0); err != nil || viaPlan.Epsilon != r.Epsilon {
		t.Errorf("Epsilons(plan) = %v, %v; EpsilonsOf %v", viaPlan.Epsilon, err, r.Epsilon)
	}
	// A shard run of another sharding without rows is left out; with a
	// row, the run in two shardings is refused.
	l, err := ledger.Open(ctx, store, RunID("e", 0, 2), ledger.Options{Delta: 1e-5})
	if err != nil {
		t.Fatal(err)
	}
	if found, err := Find(ctx, store); err != nil || found["e"] != 3 {
		t.Errorf("Find with an empty shard run of another sharding = %v, %v", found, err)
	}
	if err := l.Debit(ctx, 1, event.Round{Randomizer: "rinf", N: 15, Reports: 3, Eps0: 1}.Event(), 3, sha256.Sum256([]byte("x"))); err != nil {
		t.Fatal(err)
	}
	if _, err := Find(ctx, store); err == nil {
		t.Error("a run in 3 and in 2 shards was accepted")
	}
}
