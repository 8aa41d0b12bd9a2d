package ledger

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shuffledp/shuffledp/event"
)

// debitUntilRefused debits ev round after round until the ledger refuses,
// returning the rounds debited.
func debitUntilRefused(t *testing.T, l *Ledger, ev event.Event, max int64) int64 {
	t.Helper()
	ctx := context.Background()
	for r := int64(0); r < max; r++ {
		err := l.Debit(ctx, r, ev, int(ev.K), [32]byte{byte(r), byte(r >> 8)})
		if errors.Is(err, ErrBudgetExhausted) {
			return r
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Fatalf("no refusal in %d rounds", max)
	return 0
}

// TestPLDStop: with PLDStop the ledger admits rounds the cheap routes
// refuse, exactly as many as the PLD route allows: at the stop, event.Best
// of the debited rounds is <= the target (never past it) and of one more
// round above it; the ledger's epsilon at the stop is <= the target; the
// stop is not earlier than without PLDStop; and the search runs once.
func TestPLDStop(t *testing.T) {
	const delta, target = 1e-5, 0.5
	ev := event.Event{Mechanism: event.SubsampledShuffle, N: 10000, K: 100, Eps0: 3}
	ctx := context.Background()
	cheap, err := Open(ctx, NewMemoryStore(), "cheap", Options{Delta: delta, Target: target})
	if err != nil {
		t.Fatal(err)
	}
	rc := debitUntilRefused(t, cheap, ev, 100000)
	pl, err := Open(ctx, NewMemoryStore(), "pld", Options{Delta: delta, Target: target, PLDStop: true})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	rp := debitUntilRefused(t, pl, ev, 100000)
	elapsed := time.Since(start)
	if rp < rc {
		t.Fatalf("PLDStop stopped at %d rounds, before the cheap routes' %d", rp, rc)
	}
	at, err := event.Best([]event.Composed{{Event: ev, Count: rp}}, delta, nil)
	if err != nil {
		t.Fatal(err)
	}
	if at.Epsilon > target {
		t.Fatalf("stop at %d rounds: best %g > target %g", rp, at.Epsilon, target)
	}
	after, err := event.Best([]event.Composed{{Event: ev, Count: rp + 1}}, delta, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !(after.Epsilon > target) {
		t.Errorf("stop at %d rounds: one more round has best %g <= target %g (%s): stopped early", rp, after.Epsilon, target, after.Route)
	}
	g, err := pl.Epsilon()
	if err != nil {
		t.Fatal(err)
	}
	if !(g.Epsilon <= target) || g.Epsilon < at.Epsilon {
		t.Errorf("ledger epsilon at the stop %g: want <= target %g and >= best %g", g.Epsilon, target, at.Epsilon)
	}
	if pl.book.allow == nil || len(pl.book.allow.points) > 40 {
		t.Errorf("PLD search: %+v", pl.book.allow)
	}
	t.Logf("cheap routes stop at %d rounds, PLD at %d (best %g, %s; %d PLD evaluations; %v)", rc, rp, at.Epsilon, at.Route, len(pl.book.allow.points), elapsed)
}
