package route_test

import (
	"encoding/json"
	"fmt"

	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/route"
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
	g, err := route.Epsilon([]event.Composed{{Event: e, Count: 1000}}, "best", 1e-5, nil)
	if err != nil {
		panic(err)
	}
	fmt.Printf("epsilon %.4f at delta %g\n", g.Epsilon, g.Delta)
	// Output:
	// {"mechanism":"subsampled-shuffle","n":60000,"k":10000,"eps0":1.5}
	// subsampled-shuffle(n=60000, k=10000, eps0=1.5)
	// epsilon 0.5526 at delta 1e-05
}

// Example_adjacency: 1,000 rounds of DP-SGD in the shuffle model (60 of
// 60,000 clients per round add N(0, C^2 0.86^2 I) to their clipped
// gradients), and one shuffle of 60,000 Gaussian reports (ICLR'23 Table 1).
// "best" is proven (here the PLD route); best-conjecture opts in to the
// ICLR'23 bounds and is labelled a conjecture. Under WOR subsampling the
// changed client is compared with another sampled one, up to 2C apart, so
// zero-out costs what replace-one costs; without subsampling zero-out
// (sensitivity C) is cheaper. The conjectures are evaluated at sigma/2 for
// both relations.
func Example_adjacency() {
	for _, e := range []event.Event{
		{Mechanism: event.SubsampledShuffleGaussian, N: 60000, K: 60, Sigma: 0.86, Adjacency: event.AdjacencyZeroOut},
		{Mechanism: event.SubsampledShuffleGaussian, N: 60000, K: 60, Sigma: 0.86, Adjacency: event.AdjacencyReplaceOne},
		{Mechanism: event.ShuffleGaussian, N: 60000, Sigma: 9.48, Adjacency: event.AdjacencyZeroOut},
		{Mechanism: event.ShuffleGaussian, N: 60000, Sigma: 9.48, Adjacency: event.AdjacencyReplaceOne},
	} {
		steps := int64(1000)
		if e.Mechanism == event.ShuffleGaussian {
			steps = 1
		}
		r, err := route.Best([]event.Composed{{Event: e, Count: steps}}, 1e-5, nil)
		if err != nil {
			panic(err)
		}
		c, err := route.BestWith([]event.Composed{{Event: e, Count: steps}}, route.BoundBestConjecture, 1e-5, nil)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s x%d: best %.4f (%s, %s); best-conjecture %.4f (conjecture %v)\n", e, steps, r.Epsilon, r.Winner, r.Adjacency, c.Epsilon, c.Conjecture)
	}
	// Output:
	// subsampled-shuffle-gaussian(n=60000, k=60, sigma=0.86, adjacency=zero-out) x1000: best 5.6117 (pld, zero-out); best-conjecture 3.4969 (conjecture true)
	// subsampled-shuffle-gaussian(n=60000, k=60, sigma=0.86, adjacency=replace-one) x1000: best 5.6117 (pld, replace-one); best-conjecture 3.4969 (conjecture true)
	// shuffle-gaussian(n=60000, sigma=9.48, adjacency=zero-out) x1: best 0.3611 (pld, zero-out); best-conjecture 0.0090 (conjecture true)
	// shuffle-gaussian(n=60000, sigma=9.48, adjacency=replace-one) x1: best 0.7692 (pld, replace-one); best-conjecture 0.0090 (conjecture true)
}

// ExampleBest: one shuffle of 100,000 reports of a 4-LDP randomizer at
// delta = 1e-6 (the example of FMT20's reference code). The RDP route
// certifies 0.1852; FMT20's numerical clones bound 0.16976975 and the PLD of
// the clone pair 0.16976977; Best returns the smallest, naming it.
func ExampleBest() {
	e := event.Event{Mechanism: event.Shuffle, N: 100000, Eps0: 4}
	r, err := route.Best([]event.Composed{{Event: e, Count: 1}}, 1e-6, nil)
	if err != nil {
		panic(err)
	}
	for _, rt := range r.Routes {
		fmt.Printf("%-9s %-14s %.4f\n", rt.Route, rt.Bound, rt.Epsilon)
	}
	fmt.Printf("best: %.4f, won by %s (%s route)\n", r.Epsilon, r.Winner, r.Route)
	// Output:
	// rdp       clones-rdp     0.1852
	// approx-dp fmt20-numeric  0.1698
	// pld       pld            0.1698
	// best: 0.1698, won by fmt20-numeric (approx-dp route)
}
