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
