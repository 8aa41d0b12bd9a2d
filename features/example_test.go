package features_test

import (
	"fmt"

	"github.com/shuffledp/shuffledp/data"
	"github.com/shuffledp/shuffledp/features"
)

// The scattering features of one MNIST-shaped image, as each client
// computes them before its gradient.
func ExampleScatter() {
	s, err := features.Parse("scatter", 28, 28) // J = 2, L = 8, 2x2 pooling, group norm
	if err != nil {
		panic(err)
	}
	img := data.Synthetic(1, 1).Example(0)
	out := make([]float64, s.Dim())
	s.NewWorker().Transform(img, out)
	var ss float64
	for _, v := range out {
		ss += v * v
	}
	fmt.Printf("%d channels, %d features, squared norm %.3f\n", s.Channels(), s.Dim(), ss)
	// Output: 81 channels, 324 features, squared norm 1.000
}
