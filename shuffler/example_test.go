package shuffler_test

import (
	"fmt"

	"github.com/shuffledp/shuffledp/randomizer"
	"github.com/shuffledp/shuffledp/shuffler"
)

// One round of the shuffle model end to end: k clients clip and randomize
// their vectors with R_inf, the shuffler permutes the report bytes, and the
// server averages the decoded reports. Seeded sources make the example
// reproducible; deployments use crypto/rand (the defaults).
func Example_round() {
	const d, k = 3, 1000
	r, err := randomizer.New("rinf", randomizer.Config{Eps0: 4, Dim: d, Radius: 1})
	if err != nil {
		panic(err)
	}
	src := randomizer.NewSeededSource(7) // simulation only
	reports := make([][]byte, k)
	for i := range reports {
		g := []float64{0.5, -0.25, 3} // every client holds the same vector here
		randomizer.Clip(r.Norm(), g, r.Radius())
		rep, err := r.Randomize(g, src)
		if err != nil {
			panic(err)
		}
		reports[i] = rep
	}
	s, err := shuffler.New(k, shuffler.WithSource(randomizer.NewSeededSource(8)))
	if err != nil {
		panic(err)
	}
	shuffled, err := s.Shuffle(reports)
	if err != nil {
		panic(err)
	}
	mean := make([]float64, d)
	if err := randomizer.AddDecodedAll(r, shuffled, 1.0/k, mean); err != nil {
		panic(err)
	}
	fmt.Printf("%d reports of %d bytes; mean estimate %.2f (clipped input [0.50 -0.25 1.00])\n", len(shuffled), r.ReportSize(), mean)
	// Output:
	// 1000 reports of 2 bytes; mean estimate [0.54 -0.19 0.98] (clipped input [0.50 -0.25 1.00])
}
