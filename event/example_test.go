package event_test

import (
	"encoding/json"
	"fmt"

	"github.com/shuffledp/shuffledp/event"
)

// Example: 1,000 rounds of 10,000 of 60,000 clients sampled per round, each
// sending a 1.5-LDP report, shuffled; the event as the ledger stores it and
// the epsilon `shuffledp account` reports for it.
func Example() {
	e := event.Event{Mechanism: event.SubsampledShuffle, N: 60000, K: 10000, Eps0: 1.5}
	if err := e.Validate(); err != nil {
		panic(err)
	}
	b, _ := json.Marshal(e)
	fmt.Println(string(b))
	fmt.Println(e)
	g, err := event.Epsilon([]event.Composed{{Event: e, Count: 1000}}, "best", 1e-5, nil)
	if err != nil {
		panic(err)
	}
	fmt.Printf("epsilon %.4f at delta %g\n", g.Epsilon, g.Delta)
	// Output:
	// {"mechanism":"subsampled-shuffle","n":60000,"k":10000,"eps0":1.5}
	// subsampled-shuffle(n=60000, k=10000, eps0=1.5)
	// epsilon 0.5526 at delta 1e-05
}
