package features

import (
	"fmt"
	"math"
	"math/bits"
)

// fft is an in-place iterative radix-2 Cooley-Tukey discrete Fourier
// transform of one power-of-two length n:
//
//	X[k] = sum_{t<n} x[t] exp(-2 pi i k t / n)      (forward)
//	x[t] = sum_{k<n} X[k] exp(+2 pi i k t / n)      (inverse, unnormalised)
//
// The tables are read-only after construction, so one fft is safe for
// concurrent use.
type fft struct {
	n        int
	rev      []int        // bit-reversal permutation
	fwd, inv []complex128 // per stage (size 2, 4, ..., n): exp(-+2 pi i j / size), j < size/2
}

func newFFT(n int) (*fft, error) {
	if n < 1 || n&(n-1) != 0 {
		return nil, fmt.Errorf("fft length must be a power of two, got %d", n)
	}
	f := &fft{n: n, rev: make([]int, n)}
	shift := bits.UintSize - bits.TrailingZeros(uint(n))
	for i := range n {
		if n > 1 {
			f.rev[i] = int(bits.Reverse(uint(i)) >> shift)
		}
	}
	for size := 2; size <= n; size <<= 1 {
		for j := range size / 2 {
			s, c := math.Sincos(-2 * math.Pi * float64(j) / float64(size))
			f.fwd = append(f.fwd, complex(c, s))
			f.inv = append(f.inv, complex(c, -s))
		}
	}
	return f, nil
}

// transform replaces a (length n) by its forward transform, or by the
// unnormalised inverse when inverse is true.
func (f *fft) transform(a []complex128, inverse bool) {
	n := f.n
	for i, r := range f.rev {
		if i < r {
			a[i], a[r] = a[r], a[i]
		}
	}
	table := f.fwd
	if inverse {
		table = f.inv
	}
	off := 0
	for size := 2; size <= n; size <<= 1 {
		half := size / 2
		tw := table[off : off+half]
		off += half
		for start := 0; start < n; start += size {
			x, y := a[start:start+half], a[start+half:start+size]
			for j, w := range tw {
				u, v := x[j], y[j]*w
				x[j], y[j] = u+v, u-v
			}
		}
	}
}

// transform2 replaces the n x n row-major array a by its 2-D transform
// (rows; transpose; rows; transpose back). col is unused scratch kept for
// the callers' signature.
func (f *fft) transform2(a, col []complex128, inverse bool) {
	n := f.n
	for r := range n {
		f.transform(a[r*n:(r+1)*n], inverse)
	}
	transpose(a, n)
	for r := range n {
		f.transform(a[r*n:(r+1)*n], inverse)
	}
	transpose(a, n)
}

// transpose transposes the n x n row-major array a in place.
func transpose(a []complex128, n int) {
	for r := range n {
		for c := r + 1; c < n; c++ {
			a[r*n+c], a[c*n+r] = a[c*n+r], a[r*n+c]
		}
	}
}
