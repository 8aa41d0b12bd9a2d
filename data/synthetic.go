package data

import "math/rand/v2"

// Synthetic returns n random 28x28 one-channel "images" with random labels
// of 10 classes, generated from seed: data of MNIST's shape and density
// (~80% zero pixels) for throughput measurements and tests. There is
// nothing to learn in it. The same (n, seed) gives the same data set in
// every process, so a networked run's clients and server agree on it.
func Synthetic(n int, seed uint64) *Dataset {
	r := rand.New(rand.NewPCG(seed, 0x5e7))
	ds := &Dataset{N: n, Dim: 784, Rows: 28, Cols: 28, Channels: 1, Classes: 10,
		X: make([]float64, n*784), Y: make([]int, n)}
	for i := range ds.X {
		if r.IntN(5) == 0 { // MNIST is ~80% zero pixels
			ds.X[i] = r.Float64()
		}
	}
	for i := range ds.Y {
		ds.Y[i] = r.IntN(10)
	}
	return ds
}
