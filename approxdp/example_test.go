package approxdp_test

import (
	"fmt"

	"github.com/shuffledp/shuffledp/approxdp"
)

// The example of apple/ml-shuffling-amplification: 1e5 reports of a 4-LDP
// randomizer, delta = 1e-6. Their code brackets eps in [0.1675, 0.1728].
func ExampleNumericalEpsilon() {
	iv, err := approxdp.NumericalEpsilon(100000, 4, 1e-6)
	if err != nil {
		panic(err)
	}
	cf, valid, _ := approxdp.ClosedFormEpsilon(100000, 4, 1e-6)
	fmt.Printf("numerical clones bound: eps in [%.6f, %.6f]\n", iv.Lower, iv.Upper)
	fmt.Printf("closed form (valid=%v): eps <= %.6f\n", valid, cf)
	// Output:
	// numerical clones bound: eps in [0.169770, 0.169770]
	// closed form (valid=true): eps <= 0.537804
}

// The approximate-DP baseline of NeurIPS'21 Fig. 2a: n = 1e6 clients,
// k = 1000 per round, eps0 = 2, T = 1e5 rounds, delta = 1e-8.
func ExampleSubsampledShuffle() {
	r, err := approxdp.SubsampledShuffle(1000000, 1000, 2, 100000, 1e-8, approxdp.ShuffleBest)
	if err != nil {
		panic(err)
	}
	fmt.Printf("eps = %.3f (one shuffle: eps %.3f at delta %.1e)\n", r.Epsilon, r.ShuffleEpsilon, r.ShuffleDelta)
	// Output:
	// eps = 2.522 (one shuffle: eps 0.819 at delta 6.6e-11)
}

func ExampleKOV15Epsilon() {
	eps, _ := approxdp.KOV15Epsilon(0.01, 1000, 1e-6)
	fmt.Printf("%.4f\n", eps)
	// Output:
	// 1.6415
}
