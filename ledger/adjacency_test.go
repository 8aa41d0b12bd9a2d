package ledger

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/route"
)

// TestAdjacencyOfRun: a run's epsilon stays stated for one neighbouring
// relation. A legacy run (events stored without an adjacency, zero-out by
// their meaning) continues with explicit zero-out events, and a retry of a
// legacy round with zero-out spelled out is not a conflict; a replace-one
// run refuses a zero-out round (its statement would become zero-out), and
// the summary names the relation.
func TestAdjacencyOfRun(t *testing.T) {
	ctx := context.Background()
	legacy := event.Event{Mechanism: event.SubsampledShuffleGaussian, N: 1000, K: 100, Sigma: 5}
	zeroOut, replaceOne := legacy, legacy
	zeroOut.Adjacency, replaceOne.Adjacency = event.AdjacencyZeroOut, event.AdjacencyReplaceOne

	l := openLedger(t, NewMemoryStore(), "legacy", Options{})
	debit(t, l, 0, legacy)
	debit(t, l, 0, zeroOut) // a retry of round 0 by a newer build
	debit(t, l, 1, zeroOut)
	if err := l.Debit(ctx, 1, replaceOne, 100, digest(1)); !errors.Is(err, ErrConflict) {
		t.Errorf("replace-one retry of a zero-out round: %v, want ErrConflict", err)
	}
	s, err := l.Summary(false)
	if err != nil {
		t.Fatal(err)
	}
	if s.Adjacency != event.AdjacencyZeroOut || s.Rounds != 2 {
		t.Errorf("legacy run: %d rounds for %q, want 2 for zero-out", s.Rounds, s.Adjacency)
	}
	want, err := route.Best([]event.Composed{{Event: zeroOut, Count: 2}}, delta, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Epsilon != want.Epsilon {
		t.Errorf("legacy + zero-out rounds: epsilon %v, want zero-out's %v", s.Epsilon, want.Epsilon)
	}

	r := openLedger(t, NewMemoryStore(), "new", Options{})
	debit(t, r, 0, replaceOne)
	for _, ev := range []event.Event{zeroOut, legacy} {
		err := r.Debit(ctx, 1, ev, 100, digest(1))
		if err == nil || !strings.HasPrefix(err.Error(), "--adjacency zero-out") {
			t.Errorf("zero-out round %s in a replace-one run: %v, want a refusal naming --adjacency", ev, err)
		}
	}
	debit(t, r, 1, replaceOne)
	if s, err := r.Summary(false); err != nil || s.Adjacency != event.AdjacencyReplaceOne || s.Rounds != 2 {
		t.Errorf("replace-one run: %+v, %v", s, err)
	}
}
