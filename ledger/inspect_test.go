package ledger_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strings"
	"testing"

	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/ledger"
)

// TestCheckAllRebuildsRoundEvents: CheckAll re-builds every stored event
// through event.RoundEvent. A run of each round kind, debited with the
// event RoundEvent gives its round (as the simulation and the shuffler
// debit), has no note; a run debited with an event of no round (shuffle,
// without subsampling) or with a field its round kind does not carry (an LDP event with an adjacency) is listed;
// every run with rounds gets its PLD route or the reason it has none.
func TestCheckAllRebuildsRoundEvents(t *testing.T) {
	ctx := context.Background()
	store := ledger.NewMemoryStore()
	debit := func(run string, ev event.Event) {
		t.Helper()
		l, err := ledger.Open(ctx, store, run, ledger.Options{Delta: 1e-5})
		if err != nil {
			t.Fatal(err)
		}
		for r := range int64(3) {
			if err := l.Debit(ctx, r, ev, 10, sha256.Sum256(fmt.Appendf(nil, "%s %d", run, r))); err != nil {
				t.Fatalf("%s: %v", run, err)
			}
		}
	}
	rounds := map[string]event.Round{
		"ldp":      {Randomizer: "rinf", N: 1000, Reports: 10, Eps0: 2},
		"gaussian": {Randomizer: event.RandomizerGaussian, N: 1000, Reports: 10, Sigma: 4, Adjacency: event.AdjacencyReplaceOne},
		"checkin":  {Randomizer: event.RandomizerGaussian, Participation: event.ParticipationCheckIn, N: 1000, Rate: 0.01, Sigma: 4, Adjacency: event.AdjacencyZeroOut},
		"central":  {Randomizer: event.RandomizerCentralGaussian, N: 1000, Rate: 0.01, Sigma: 2, Adjacency: event.AdjacencyAddRemove},
	}
	for run, r := range rounds {
		ev, err := event.RoundEvent(r)
		if err != nil {
			t.Fatal(err)
		}
		debit(run, ev)
	}
	debit("no-round", event.Event{Mechanism: event.Shuffle, N: 100, Eps0: 1})
	debit("ldp-adjacency", event.Event{Mechanism: event.SubsampledShuffle, N: 1000, K: 10, Eps0: 2, Adjacency: event.AdjacencyReplaceOne})
	c, err := ledger.CheckAll(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	if c.Runs != 6 || c.Entries != 18 || len(c.Accounts) != 6 {
		t.Fatalf("CheckAll: %d runs, %d entries, %d accounts; want 6, 18, 6", c.Runs, c.Entries, len(c.Accounts))
	}
	for _, a := range c.Accounts {
		_, isRound := rounds[a.Run]
		if isRound != (len(a.NotRoundEvents) == 0) {
			t.Errorf("run %s: notes %q", a.Run, a.NotRoundEvents)
		}
		if !isRound && !strings.Contains(strings.Join(a.NotRoundEvents, ";"), "round") {
			t.Errorf("run %s: note %q does not say why", a.Run, a.NotRoundEvents)
		}
		if a.PLDErr == nil && !(a.PLD.Upper > 0) || a.Rounds != 3 {
			t.Errorf("run %s: %d rounds, PLD %+v (%v)", a.Run, a.Rounds, a.PLD, a.PLDErr)
		}
	}
}
