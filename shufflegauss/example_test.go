package shufflegauss_test

import (
	"fmt"

	"github.com/shuffledp/shuffledp/shufflegauss"
)

// The shuffle Gaussian RDP of Theorem 1 at n = 60000 clients and sigma = 9.48
// (the setting of the paper's Table 1), next to the Gaussian RDP without
// shuffling (Corollary 1).
func ExampleShuffle() {
	s, err := shufflegauss.NewShuffle(9.48, 60000)
	if err != nil {
		panic(err)
	}
	for _, order := range []float64{2, 30, 2000} {
		eps, _ := s.RDP(order)
		fmt.Printf("order %4.0f: eps %.6e  (unshuffled %.6e)\n", order, eps, order/(2*9.48*9.48))
	}
	// Output:
	// order    2: eps 1.864879e-07  (unshuffled 1.112713e-02)
	// order   30: eps 2.797318e-06  (unshuffled 1.669070e-01)
	// order 2000: eps 1.250475e-01  (unshuffled 1.112713e+01)
}

// Subsampled shuffle Gaussian (Theorem 2, eq. 10): 600 of 60000 clients
// per round.
func ExampleSubsampled() {
	s, err := shufflegauss.NewSubsampled(2, 60000, 600)
	if err != nil {
		panic(err)
	}
	for _, order := range []float64{2, 8, 32} {
		eps, _ := s.RDP(order)
		fmt.Printf("order %2.0f: eps %.6e\n", order, eps)
	}
	// Output:
	// order  2: eps 1.893503e-07
	// order  8: eps 1.698131e-05
	// order 32: eps 3.462518e-04
}

// Shuffled check-in Gaussian: eq. (11) as a binomial mixture and eq. (13),
// at the paper's distributed-learning setting (n = 60000, rate 0.1,
// sigma = 5).
func ExampleCheckIn() {
	for _, m := range []shufflegauss.CheckInMethod{shufflegauss.CheckInMixture, shufflegauss.CheckInChernoff} {
		c, err := shufflegauss.NewCheckIn(5, 60000, 0.1, m)
		if err != nil {
			panic(err)
		}
		eps, _ := c.RDP(4)
		fmt.Printf("%s: eps(4) = %.6e\n", c.Name(), eps)
	}
	// Output:
	// checkin-gaussian(sigma=5, n=60000, rate=0.1, eq11): eps(4) = 2.722785e-03
	// checkin-gaussian(sigma=5, n=60000, rate=0.1, eq13): eps(4) = 2.722846e-03
}
