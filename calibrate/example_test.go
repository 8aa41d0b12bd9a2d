package calibrate_test

import (
	"fmt"
	"math"

	"github.com/shuffledp/shuffledp/calibrate"
)

// Calibrate the noise of the plain Gaussian mechanism over T steps by
// Mironov's RDP conversion: eps(sigma) = min over orders of
// T*order/(2 sigma^2) + log(1/delta)/(order-1).
func ExampleSmallestFeasible() {
	const steps, delta = 100.0, 1e-5
	eps := func(sigma float64) (float64, error) {
		best := math.Inf(1)
		for order := 2.0; order <= 256; order++ {
			best = math.Min(best, steps*order/(2*sigma*sigma)+math.Log(1/delta)/(order-1))
		}
		return best, nil
	}
	res, err := calibrate.SmallestFeasible(eps, 1.0, 0.1, 1, 1e6, 1e-6)
	if err != nil {
		panic(err)
	}
	fmt.Printf("sigma %.4f gives eps %.6f <= 1\n", res.Value, res.Epsilon)
	// Output:
	// sigma 49.0151 gives eps 1.000000 <= 1
}
