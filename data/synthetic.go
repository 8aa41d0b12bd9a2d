package data

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
)

// Shape of a synthetic example: MNIST's.
const (
	syntheticDim     = 784
	syntheticClasses = 10
)

// Synthetic returns n random 28x28 one-channel "images" with random labels
// of 10 classes, generated from seed: data of MNIST's shape and density
// (~80% zero pixels) for throughput measurements and tests. There is
// nothing to learn in it. Example i depends only on (seed, i)
// (SyntheticExample), so Synthetic(n, seed) is the first n examples of
// every larger set of the same seed, and a process that needs only some
// examples (a networked client process, its own range: SyntheticRange or
// SyntheticSource) generates exactly the examples every other process
// generates for those indices.
func Synthetic(n int, seed uint64) *Dataset {
	return SyntheticRange(0, n, seed)
}

// SyntheticRange returns examples lo..hi-1 of the synthetic data set of
// seed: its example j is SyntheticExample(seed, lo+j). It panics unless
// 0 <= lo <= hi.
func SyntheticRange(lo, hi int, seed uint64) *Dataset {
	if lo < 0 || hi < lo {
		panic(fmt.Sprintf("data: synthetic range %d:%d", lo, hi))
	}
	n := hi - lo
	ds := &Dataset{N: n, Dim: syntheticDim, Rows: 28, Cols: 28, Channels: 1, Classes: syntheticClasses,
		X: make([]float64, n*syntheticDim), Y: make([]int, n)}
	var g syntheticGen
	for j := range n {
		ds.Y[j] = g.example(seed, lo+j, ds.X[j*syntheticDim:(j+1)*syntheticDim])
	}
	return ds
}

// SyntheticExample writes example i of the synthetic data set of seed into
// x (at least 784 values; the first 784 are overwritten) and returns its
// label. Each example is drawn from its own PCG (math/rand/v2's
// PCG-DXSM), seeded with seed and a bijective mix of i (splitmix64's
// finaliser), so it depends on nothing but (seed, i): not on which
// examples were generated before it, nor in which process. Labels are
// uniform on 0..9; each pixel is zero with probability 4/5 and uniform on
// [0, 1) otherwise (53-bit values); about 940 draws of the PCG, a few
// microseconds.
func SyntheticExample(seed uint64, i int, x []float64) int {
	var g syntheticGen
	return g.example(seed, i, x)
}

// syntheticGen holds one generator, reseeded for every example.
type syntheticGen struct{ pcg rand.PCG }

// oneFifth is ceil(2^64 / 5): a uniform uint64 below it has probability
// 1/5 to within 2^-64.
const oneFifth = 0x3333333333333334

func (g *syntheticGen) example(seed uint64, i int, x []float64) int {
	g.pcg.Seed(seed, mix64(uint64(i)))
	label, _ := bits.Mul64(g.pcg.Uint64(), syntheticClasses) // floor(u * 10 / 2^64): uniform to within 2^-60
	x = x[:syntheticDim]
	for p := range x {
		x[p] = 0
		if g.pcg.Uint64() < oneFifth { // MNIST is ~80% zero pixels
			x[p] = float64(g.pcg.Uint64()>>11) / (1 << 53) // as rand.Float64: [0, 1), 53 bits
		}
	}
	return int(label)
}

// mix64 is splitmix64's finaliser (Steele, Lea and Flood, "Fast splittable
// pseudorandom number generators", OOPSLA 2014) applied to i plus the
// golden-ratio increment: a bijection of uint64, so distinct indices seed
// distinct PCG states, far apart for neighbouring indices.
func mix64(i uint64) uint64 {
	z := i + 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Source is a population of examples by index, held in memory (a
// *Dataset) or generated on demand (SyntheticSource): what a client
// process needs of the training set, example i for client i.
type Source interface {
	// Len is the number of examples.
	Len() int
	// Shape returns the length of one example and the number of classes.
	Shape() (dim, classes int)
	// At returns example i and its label. buf (of length dim) may be used
	// to hold the example, which is then valid until buf is reused; a
	// Source in memory returns a view of its own storage instead. At may
	// be called from several goroutines, each with its own buf.
	At(i int, buf []float64) (x []float64, label int)
	// Label returns the label of example i alone (what a partition by
	// label reads of the population: no example's features).
	Label(i int) int
}

// Shape returns d.Dim and d.Classes.
func (d *Dataset) Shape() (dim, classes int) { return d.Dim, d.Classes }

// At returns a view of example i and its label; buf is not used.
func (d *Dataset) At(i int, _ []float64) ([]float64, int) { return d.Example(i), d.Y[i] }

// SyntheticSource is the synthetic data set of a seed with N examples,
// none of them held in memory: At generates example i (SyntheticExample)
// when asked, a few microseconds of CPU. A networked client process uses
// it so that its memory does not grow with the population: the n = 10^6
// set would be 6.3 GB of float64 per process.
type SyntheticSource struct {
	N    int
	Seed uint64
}

// Len returns s.N.
func (s SyntheticSource) Len() int { return s.N }

// Shape returns 784 and 10.
func (s SyntheticSource) Shape() (dim, classes int) { return syntheticDim, syntheticClasses }

// At generates example i into buf (allocating one when buf holds fewer
// than 784 values) and returns it with its label. It panics unless
// 0 <= i < s.N.
func (s SyntheticSource) At(i int, buf []float64) ([]float64, int) {
	if i < 0 || i >= s.N {
		panic(fmt.Sprintf("data: synthetic example %d outside [0, %d)", i, s.N))
	}
	if len(buf) < syntheticDim {
		buf = make([]float64, syntheticDim)
	}
	x := buf[:syntheticDim:syntheticDim]
	return x, SyntheticExample(s.Seed, i, x)
}

// SyntheticLabel returns the label of example i of the synthetic data set
// of seed, SyntheticExample's, without generating its pixels: the first
// draw of the example's generator.
func SyntheticLabel(seed uint64, i int) int {
	var g syntheticGen
	g.pcg.Seed(seed, mix64(uint64(i)))
	label, _ := bits.Mul64(g.pcg.Uint64(), syntheticClasses)
	return int(label)
}

// Label returns the label of example i (SyntheticLabel). It panics unless
// 0 <= i < s.N.
func (s SyntheticSource) Label(i int) int {
	if i < 0 || i >= s.N {
		panic(fmt.Sprintf("data: synthetic example %d outside [0, %d)", i, s.N))
	}
	return SyntheticLabel(s.Seed, i)
}

// Label returns the label of example i.
func (d *Dataset) Label(i int) int { return d.Y[i] }
