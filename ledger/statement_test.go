package ledger

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/shuffledp/shuffledp/accounting"
	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/route"
)

// TestCheckpoint: every count up to 64 is its own checkpoint; beyond, the
// checkpoint is the grid point at or above the count, at most 1/64 of it
// (plus one) above, the grid is increasing, and its points up to 10,557
// and 90,000 rounds number as the doc comment says.
func TestCheckpoint(t *testing.T) {
	points := map[int64]bool{}
	prev := int64(0)
	for c := int64(1); c <= 100000; c++ {
		m := Checkpoint(c)
		if m < c || (c <= 64 && m != c) || float64(m-c) > float64(c)/64+1 {
			t.Fatalf("Checkpoint(%d) = %d", c, m)
		}
		if m < prev {
			t.Fatalf("Checkpoint(%d) = %d below Checkpoint(%d) = %d", c, m, c-1, prev)
		}
		if Checkpoint(m) != m {
			t.Fatalf("Checkpoint(%d) = %d is not a fixed point", c, m)
		}
		prev = m
		points[m] = true
		switch c {
		case 10557:
			if n := len(points); n < 360 || n > 380 {
				t.Errorf("%d grid points up to 10,557 rounds, the doc says about 370", n)
			}
		case 90000:
			if n := len(points); n < 500 || n > 520 {
				t.Errorf("%d grid points up to 90,000 rounds, the doc says about 510", n)
			}
		}
	}
}

// TestStatementIsBestAtCheckpoints: the ledger's statement of c rounds is
// route.Best's of c rounds (the number `account --bound best` prints) at
// every checkpoint, and between checkpoints it is at least route.Best's
// (never a number below the route's value at the run's rounds) and at most
// route.Best's at the next checkpoint. The negative control: rounding the
// composition DOWN to the previous grid point (evaluating the costly
// routes at fewer rounds than the run has) states less than route.Best,
// a number no route certifies for the run.
func TestStatementIsBestAtCheckpoints(t *testing.T) {
	const delta = 1e-5
	ev := event.Event{Mechanism: event.SubsampledShuffle, N: 10000, K: 100, Eps0: 2}
	b := newBook(RunInfo{Run: "r", Delta: delta, Bound: accounting.BoundBest})
	best := func(c int64) route.BestResult {
		r, err := route.Best([]event.Composed{{Event: ev, Count: c}}, delta, nil)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	for _, c := range []int64{1, 64, 65, 120, 130, 131, 137} {
		st, err := b.statement([]event.Composed{{Event: ev, Count: c}}, delta, true)
		if err != nil {
			t.Fatal(err)
		}
		at, next := best(c), best(Checkpoint(c))
		switch {
		case Checkpoint(c) == c && (st.Epsilon != at.Epsilon || st.Route != at.Route || st.Winner != at.Winner || st.EvaluatedAt != 0):
			t.Errorf("%d rounds (a checkpoint): ledger %+v, route.Best %g (%s, %s)", c, st, at.Epsilon, at.Route, at.Winner)
		case st.Epsilon < at.Epsilon || st.Epsilon > next.Epsilon:
			t.Errorf("%d rounds: ledger %g (%s at %d), want within [best %g, best at the checkpoint %d: %g]",
				c, st.Epsilon, st.Route, st.EvaluatedAt, at.Epsilon, Checkpoint(c), next.Epsilon)
		case st.Route == route.RoutePLD && Checkpoint(c) != c && st.EvaluatedAt != Checkpoint(c):
			t.Errorf("%d rounds: PLD won at the checkpoint %d, EvaluatedAt %d", c, Checkpoint(c), st.EvaluatedAt)
		}
		t.Logf("%d rounds: ledger %.9g (%s, at %d), best %.9g, at the checkpoint %.9g", c, st.Epsilon, st.Route, st.EvaluatedAt, at.Epsilon, next.Epsilon)
	}
	// Negative control: the grid point below 137 rounds' checkpoint.
	prevPoint := Checkpoint(137) - 1
	for Checkpoint(prevPoint-1) == Checkpoint(prevPoint) {
		prevPoint--
	}
	prevPoint = Checkpoint(prevPoint - 1)
	if prevPoint >= 137 || Checkpoint(prevPoint) != prevPoint {
		t.Fatalf("grid point below 137: %d", prevPoint)
	}
	wrong, at := best(prevPoint), best(137)
	if at.Route != route.RoutePLD || !(wrong.Epsilon < at.Epsilon) {
		t.Errorf("negative control: PLD at %d rounds %g is not below best at 137 rounds %g (%s): the test cannot tell the rounding's direction",
			prevPoint, wrong.Epsilon, at.Epsilon, at.Route)
	}
}

// TestStatementCostlyOncePerCheckpoint: a ledger pricing and debiting
// every round evaluates the costly routes once per checkpoint (plus the
// next one, priced before its round), not once per round, and its
// statement is non-decreasing.
func TestStatementCostlyOncePerCheckpoint(t *testing.T) {
	ev := event.Event{Mechanism: event.SubsampledShuffle, N: 1000, K: 10, Eps0: 1}
	l := openLedger(t, NewMemoryStore(), "r", Options{Target: 1e9})
	prev := 0.0
	const rounds = 90
	for r := range int64(rounds) {
		debit(t, l, r, ev)
		s, err := l.Statement()
		if err != nil {
			t.Fatal(err)
		}
		if s.Epsilon < prev || math.IsNaN(s.Epsilon) {
			t.Fatalf("round %d: epsilon %g after %g", r, s.Epsilon, prev)
		}
		prev = s.Epsilon
	}
	points := map[int64]bool{}
	for c := int64(1); c <= rounds+1; c++ {
		points[Checkpoint(c)] = true
	}
	if n := l.CostlyEvaluations(); n > len(points) {
		t.Errorf("%d costly evaluations over %d rounds, want at most %d (one per checkpoint)", n, rounds, len(points))
	}
}

// TestStatementLabels: "best" is printed only for best; a conjecture is
// labelled.
func TestStatementLabels(t *testing.T) {
	for _, tc := range []struct {
		s    Statement
		want string
	}{
		{Statement{Bound: "best", Route: "pld", Winner: "pld", Rounds: 10}, "best (pld route)"},
		{Statement{Bound: "best", Route: "rdp", Winner: "clones-rdp", Rounds: 10}, "best (rdp route: clones-rdp)"},
		{Statement{Bound: "best", Route: "pld", Winner: "pld", Rounds: 100, EvaluatedAt: 101}, "best (pld route, evaluated at 101 rounds)"},
		{Statement{Bound: "best-conjecture", Route: "rdp", Winner: "iclr23-thm1", Conjecture: true, Rounds: 10}, "best-conjecture (rdp route: iclr23-thm1; CONJECTURE)"},
		{Statement{Bound: "clones-rdp", Route: "rdp", Winner: "", Rounds: 10}, "clones-rdp"},
	} {
		if got := tc.s.Label(); got != tc.want {
			t.Errorf("Label() = %q, want %q", got, tc.want)
		}
	}
}

// TestBoundRecorded: the run's bound is recorded with the run; a ledger
// opened with the other setting is refused naming it, and a statement
// won by a conjectured bound is labelled.
func TestBoundRecorded(t *testing.T) {
	ctx := context.Background()
	store := NewMemoryStore()
	ev := event.Event{Mechanism: event.ShuffleGaussian, N: 1000, Sigma: 5}
	l := openLedger(t, store, "run", Options{Bound: route.BoundBestConjecture})
	debit(t, l, 0, ev)
	if _, err := Open(ctx, store, "run", Options{Delta: delta}); !errors.Is(err, ErrRunMismatch) || !strings.Contains(err.Error(), "bound") {
		t.Errorf("reopening a best-conjecture run with best: %v, want ErrRunMismatch naming the bound", err)
	}
	st, err := l.Statement()
	if err != nil {
		t.Fatal(err)
	}
	plain := openLedger(t, NewMemoryStore(), "run", Options{})
	debit(t, plain, 0, ev)
	pst, err := plain.Statement()
	if err != nil {
		t.Fatal(err)
	}
	// Labelled exactly when a conjecture attains it (under "best" too,
	// for as long as event's best admits a conjectured Gaussian bound).
	for _, s := range []Statement{st, pst} {
		if s.Conjecture != route.IsConjecture(s.Winner) || s.Conjecture != strings.Contains(s.Label(), "CONJECTURE") {
			t.Errorf("statement %+v labelled %q", s, s.Label())
		}
	}
	if st.Epsilon > pst.Epsilon || st.Bound != route.BoundBestConjecture || pst.Bound != "best" {
		t.Errorf("best-conjecture statement %+v, best's %+v", st, pst)
	}
	t.Logf("best-conjecture %g by %s; best %g by %s", st.Epsilon, st.Label(), pst.Epsilon, pst.Label())
}
