package randomizer_test

import (
	"fmt"

	"github.com/shuffledp/shuffledp/randomizer"
)

func ExampleNewDJW() {
	// The l_2 mechanism of the authors' NeurIPS'21 Fig. 6 code: eps0 = 2,
	// clip C = 0.005, d = 13,706 (the cnn-tanh network).
	r, err := randomizer.NewDJW(2, 13706, 0.005)
	if err != nil {
		panic(err)
	}
	grad := make([]float64, r.Dim())
	grad[0] = 0.003
	randomizer.Clip(r.Norm(), grad, r.Radius())
	rep, err := r.Randomize(grad, randomizer.NewSeededSource(1)) // simulation only
	if err != nil {
		panic(err)
	}
	fmt.Printf("M = %.4f, report %d bytes, eps0 spent %.6f\n", r.OutputRadius(), len(rep), r.LogRatioBound())
	// Output: M = 0.9633, report 54825 bytes, eps0 spent 2.000000
}
