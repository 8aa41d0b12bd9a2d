package ledger

import (
	"context"
	"errors"
	"testing"

	"github.com/shuffledp/shuffledp/accounting"
	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/route"
)

// TestLedgerBestUsesEveryRoute: under "best" a debit is refused only when
// every route of route.Best exceeds the target. One round of 1,000 of
// 100,000 clients at eps0 = 3, delta = 1e-5 costs 0.0378 by RDP and 0.0090
// by FMT20 + Ullman (approximate DP); with a target of 0.02 the round is
// admitted under "best" (epsilon reported 0.0090, as route.Best) and refused
// under clones-rdp alone.
func TestLedgerBestUsesEveryRoute(t *testing.T) {
	ctx := context.Background()
	ev := event.Event{Mechanism: event.SubsampledShuffle, N: 100000, K: 1000, Eps0: 3}
	one := []event.Composed{{Event: ev, Count: 1}}
	rdpRes, err := route.Account(one, accounting.BoundBest, 1e-5, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !(rdpRes.Epsilon > 0.02) {
		t.Fatalf("setting no longer separates the routes: RDP %+v", rdpRes)
	}
	want, err := route.Best(one, 1e-5, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want.Route == route.RouteRDP || !(want.Epsilon < 0.02) {
		t.Fatalf("setting no longer separates the routes: %+v", want)
	}
	l, err := Open(ctx, NewMemoryStore(), "best", Options{Delta: 1e-5, Target: 0.02})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Debit(ctx, 0, ev, 1000, [32]byte{1}); err != nil {
		t.Fatalf("best refused a round every route but RDP admits: %v", err)
	}
	g, err := l.Epsilon()
	if err != nil {
		t.Fatal(err)
	}
	if g.Epsilon != want.Epsilon {
		t.Errorf("ledger epsilon %.9g, route.Best %.9g", g.Epsilon, want.Epsilon)
	}
	s, err := l.Summary(false)
	if err != nil {
		t.Fatal(err)
	}
	if s.Epsilon != want.Epsilon || s.Winner != want.Winner {
		t.Errorf("summary %.9g won by %q, route.Best %.9g won by %q", s.Epsilon, s.Winner, want.Epsilon, want.Winner)
	}

	rdp, err := Open(ctx, NewMemoryStore(), "rdp", Options{Delta: 1e-5, Target: 0.02, Bound: accounting.BoundClonesRDP})
	if err != nil {
		t.Fatal(err)
	}
	if err := rdp.Debit(ctx, 0, ev, 1000, [32]byte{1}); !errors.Is(err, ErrBudgetExhausted) {
		t.Errorf("clones-rdp alone: debit error %v, want ErrBudgetExhausted (0.0378 > 0.02)", err)
	}
}
