package pld_test

import (
	"fmt"

	"github.com/shuffledp/shuffledp/pld"
)

// Ten rounds of the subsampled shuffle, 1,000 of 100,000 clients sampled
// per round, each with an eps0 = 3 local randomizer.
func ExampleCloneShuffle() {
	c, err := pld.CloneShuffle(100000, 1000, 3, 10, pld.Options{})
	if err != nil {
		panic(err)
	}
	iv, err := c.Epsilon(1e-5)
	if err != nil {
		panic(err)
	}
	fmt.Printf("epsilon <= %.4f (discretisation interval [%.4f, %.4f])\n", iv.Upper, iv.Lower, iv.Upper)
	// Output: epsilon <= 0.0262 (discretisation interval [0.0262, 0.0262])
}

// Heterogeneous events: a pair over a finite outcome set (here binary
// randomized response at eps0 = 1, add-remove style), then 100 rounds of
// the plain shuffle.
func ExampleAccountant() {
	var a pld.Accountant
	e := 2.718281828459045
	if err := a.AddPMFs([]float64{e / (1 + e), 1 / (1 + e)}, []float64{1 / (1 + e), e / (1 + e)}, 1, false); err != nil {
		panic(err)
	}
	if err := a.AddClone(1000, 1000, 1, 100); err != nil {
		panic(err)
	}
	iv, err := a.Epsilon(1e-6)
	if err != nil {
		panic(err)
	}
	fmt.Printf("epsilon in [%.3f, %.3f]\n", iv.Lower, iv.Upper)
	// Output: epsilon in [3.131, 3.133]
}

// DP-SGD's accountant: 1,000 steps of the Poisson-subsampled Gaussian
// mechanism (noise multiplier 1, sampling rate 1%), add-remove neighbours.
func ExampleSampledGaussian() {
	c, err := pld.SampledGaussian(1, 0.01, 1000, pld.Options{})
	if err != nil {
		panic(err)
	}
	iv, err := c.Epsilon(1e-5)
	if err != nil {
		panic(err)
	}
	fmt.Printf("epsilon in [%.3f, %.3f]\n", iv.Lower, iv.Upper)
	// Output: epsilon in [1.828, 1.828]
}
