package sampledgauss_test

import (
	"fmt"

	"github.com/shuffledp/shuffledp/accounting"
	"github.com/shuffledp/shuffledp/sampledgauss"
)

// DP-SGD on MNIST as in the TF Privacy tutorial: 60000 examples, Poisson
// sampling with expected batch 256, noise multiplier 1.1, 60 epochs
// (14063 steps), delta = 1e-5.
func Example() {
	m, err := sampledgauss.New(256.0/60000, 1.1)
	if err != nil {
		panic(err)
	}
	for _, order := range []float64{1.5, 2, 8, 32} {
		eps, _ := m.RDP(order)
		fmt.Printf("eps(%g) = %.6e per step\n", order, eps)
	}
	acct, _ := accounting.NewAccountant(nil) // default order grid
	_ = acct.Compose(m, 14063)
	g, _ := acct.Epsilon(1e-5)
	fmt.Printf("after 14063 steps: epsilon = %.3f at order %g (delta = 1e-5)\n", g.Epsilon, g.Order)
	// Output:
	// eps(1.5) = 1.747978e-05 per step
	// eps(2) = 2.339578e-05 per step
	// eps(8) = 9.834106e-05 per step
	// eps(32) = 7.590188e+00 per step
	// after 14063 steps: epsilon = 2.597 at order 8 (delta = 1e-5)
}
