package shard_test

import (
	"fmt"

	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/route"
	"github.com/shuffledp/shuffledp/shard"
)

// A run of 60,000 clients, 600 per round, served by three shard replicas:
// each shard is a subsampled shuffle of 200 of its 20,000 clients, and a
// client's guarantee is its own shard's, which is weaker than one shuffle
// of all 60,000 (amplification by n_s and k_s, not n and k).
func ExampleSplit() {
	p, err := shard.Split("mnist-1", 60000, 600, 3)
	if err != nil {
		panic(err)
	}
	eps := func(n, k int64) float64 {
		g, err := route.Epsilon([]event.Composed{{Event: event.Round{Randomizer: "rinf", N: n, Reports: k, Eps0: 2}.Event(), Count: 100}}, "", 1e-5, nil)
		if err != nil {
			panic(err)
		}
		return g.Epsilon
	}
	for _, part := range p.Parts {
		fmt.Printf("shard %d (%s): clients %d..%d, k_s = %d, epsilon after 100 rounds %.3f\n",
			part.Index, part.Run, part.Lo, part.Hi-1, part.K, eps(part.N(), part.K))
	}
	fmt.Printf("one shuffle of all: epsilon %.3f\n", eps(p.N, p.K))
	// Output:
	// shard 0 (mnist-1#shard-0-of-3): clients 0..19999, k_s = 200, epsilon after 100 rounds 0.118
	// shard 1 (mnist-1#shard-1-of-3): clients 20000..39999, k_s = 200, epsilon after 100 rounds 0.118
	// shard 2 (mnist-1#shard-2-of-3): clients 40000..59999, k_s = 200, epsilon after 100 rounds 0.118
	// one shuffle of all: epsilon 0.060
}
