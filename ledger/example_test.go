package ledger_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log"

	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/ledger"
	"github.com/shuffledp/shuffledp/route"
)

// A shuffler debits each round's privacy event before it releases the
// batch; a retry debits nothing, and a round past the target is refused.
func Example() {
	ctx := context.Background()
	store := ledger.NewMemoryStore() // ledger.OpenSQLite for a durable one
	round := event.Event{Mechanism: "subsampled-shuffle", N: 60000, K: 1000, Eps0: 2}

	// The target: what two rounds cost (`account --bound best --steps 2`).
	two, err := route.Best([]event.Composed{{Event: round, Count: 2}}, 1e-5, nil)
	if err != nil {
		log.Fatal(err)
	}
	l, err := ledger.Open(ctx, store, "run-1", ledger.Options{Delta: 1e-5, Target: two.Epsilon})
	if err != nil {
		log.Fatal(err)
	}
	for r := range int64(3) {
		batch := sha256.Sum256(fmt.Appendf(nil, "the shuffled reports of round %d", r))
		err := l.Debit(ctx, r, round, 1000, batch)
		switch {
		case errors.Is(err, ledger.ErrBudgetExhausted):
			fmt.Printf("round %d: refused, batch discarded\n", r)
		case err != nil:
			log.Fatal(err)
		default:
			fmt.Printf("round %d: debited, batch released\n", r)
		}
	}
	// A retry of round 1 (say, after a lost acknowledgement) is a no-op.
	if err := l.Debit(ctx, 1, round, 1000, sha256.Sum256([]byte("the shuffled reports of round 1"))); err != nil {
		log.Fatal(err)
	}
	g, err := l.Epsilon()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("rounds:", l.Rounds(), "epsilon at the target:", g.Epsilon == two.Epsilon)
	// Output:
	// round 0: debited, batch released
	// round 1: debited, batch released
	// round 2: refused, batch discarded
	// rounds: 2 epsilon at the target: true
}
