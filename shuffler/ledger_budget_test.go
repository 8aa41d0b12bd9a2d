package shuffler

import (
	"context"
	"errors"
	"testing"

	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/ledger"
)

func TestLedgerBudget(t *testing.T) {
	ctx := context.Background()
	ev := func(k int) event.Event {
		return event.Event{Mechanism: event.SubsampledShuffle, N: 1000, K: int64(k), Eps0: 1}
	}
	for _, replay := range []bool{false, true} {
		l, err := ledger.Open(ctx, ledger.NewMemoryStore(), "run", ledger.Options{Delta: 1e-5})
		if err != nil {
			t.Fatal(err)
		}
		b := &LedgerBudget{Ledger: l, Event: ev, Replay: replay}
		r1 := Release{Run: "run", Round: 1, Reports: 100, Digest: [32]byte{1}}
		for _, tc := range []struct {
			name   string
			r      Release
			err    error // nil: must succeed
			rounds int64
		}{
			{"first", r1, nil, 1},
			{"retry of the same batch", r1, nil, 1},
			{"same round, another batch", Release{Run: "run", Round: 1, Reports: 100, Digest: [32]byte{2}}, ledger.ErrConflict, 1},
			{"a gap after a discarded round", Release{Run: "run", Round: 3, Reports: 100, Digest: [32]byte{3}}, nil, 2},
			{"another run", Release{Run: "other", Round: 4, Reports: 100, Digest: [32]byte{4}}, errors.New("any"), 2},
		} {
			err := b.Debit(ctx, tc.r)
			if (err == nil) != (tc.err == nil) || (tc.err == ledger.ErrConflict && !errors.Is(err, ledger.ErrConflict)) || l.Rounds() != tc.rounds {
				t.Errorf("replay=%v %s: error %v, %d rounds; want %v, %d rounds", replay, tc.name, err, l.Rounds(), tc.err, tc.rounds)
			}
		}
		last, err := b.LastRound(ctx, "run")
		if want := map[bool]int64{false: 3, true: 0}[replay]; err != nil || last != want {
			t.Errorf("replay=%v: LastRound = %d, %v; want %d", replay, last, err, want)
		}
	}
}

// TestLedgerBudgetTarget: Check refuses a new round past the target before
// any sampling; in replay mode a round the ledger already holds is not
// refused by Check (an identical replay costs nothing; Debit decides).
func TestLedgerBudgetTarget(t *testing.T) {
	ctx := context.Background()
	ev := func(k int) event.Event {
		return event.Event{Mechanism: event.SubsampledShuffle, N: 1000, K: int64(k), Eps0: 1}
	}
	probe, _ := ledger.Open(ctx, ledger.NewMemoryStore(), "run", ledger.Options{Delta: 1e-5})
	g, err := probe.NextEpsilon(ev(100))
	if err != nil {
		t.Fatal(err)
	}
	l, _ := ledger.Open(ctx, ledger.NewMemoryStore(), "run", ledger.Options{Delta: 1e-5, Target: g.Epsilon})
	b := &LedgerBudget{Ledger: l, Event: ev, Replay: true}
	r1 := Release{Run: "run", Round: 1, Reports: 100, Digest: [32]byte{1}}
	if err := b.Check(ctx, r1); err != nil {
		t.Fatalf("check of the first round: %v", err)
	}
	if err := b.Debit(ctx, r1); err != nil {
		t.Fatal(err)
	}
	if err := b.Check(ctx, Release{Run: "run", Round: 2, Reports: 100}); !errors.Is(err, ledger.ErrBudgetExhausted) {
		t.Fatalf("check past the target: %v", err)
	}
	if err := b.Check(ctx, Release{Run: "run", Round: 1, Reports: 100}); err != nil {
		t.Fatalf("check of a replayed round: %v", err)
	}
	if err := b.Debit(ctx, r1); err != nil {
		t.Fatalf("identical replay refused: %v", err)
	}
	if l.Rounds() != 1 {
		t.Fatalf("%d rounds, want 1", l.Rounds())
	}
}
