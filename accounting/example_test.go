package accounting_test

import (
	"fmt"

	"github.com/shuffledp/shuffledp/accounting"
)

// The NeurIPS'21 Fig. 2a setting: 1e5 rounds, each sampling 1000 of 1e6
// clients with an eps0 = 2 randomizer, at delta = 1e-8.
func ExampleAccountant() {
	best, err := accounting.Best(1000000, 1000, 2)
	if err != nil {
		panic(err)
	}
	acct, _ := accounting.NewAccountant(nil) // default order grid
	_ = acct.Compose(best, 100000)
	g, _ := acct.Epsilon(1e-8)
	_, winner, _ := best.RDPWinner(g.Order)
	fmt.Printf("epsilon=%.4f at order %g (%s, via %s)\n", g.Epsilon, g.Order, winner, g.Conversion)
	// Output: epsilon=0.2214 at order 120 (clones-rdp, via cks20)
}

// Rounds with different parameters compose in one accountant.
func ExampleAccountant_heterogeneous() {
	acct, _ := accounting.NewAccountant(nil)
	warmup, _ := accounting.Best(60000, 1000, 1)
	main, _ := accounting.Best(60000, 10000, 1.5)
	_ = acct.Compose(warmup, 60)
	_ = acct.Compose(main, 600)
	g, _ := acct.Epsilon(1e-5)
	fmt.Printf("epsilon=%.3f\n", g.Epsilon)
	for _, e := range acct.Events() {
		fmt.Println(e.Name, e.Count)
	}
	// Output:
	// epsilon=0.420
	// best 60
	// best 600
}

func ExampleSubsampledShuffleUpper() {
	thm1, _ := accounting.SubsampledShuffleUpper(1000000, 1000, 2)
	for _, order := range []float64{2, 10, 100} {
		v, _ := thm1.RDP(order)
		fmt.Printf("eps(%g) = %.6e\n", order, v)
	}
	// Output:
	// eps(2) = 3.249666e-07
	// eps(10) = 1.693289e-06
	// eps(100) = 2.497249e-05
}
