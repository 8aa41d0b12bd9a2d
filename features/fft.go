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
	n   int
	rev []int        // bit-reversal permutation
	tw  []complex128 // tw[j] = exp(-2 pi i j / n), j < n/2
}

func newFFT(n int) (*fft, error) {
	if n < 1 || n&(n-1) != 0 {
		return nil, fmt.Errorf("fft length must be a power of two, got %d", n)
	}
	f := &fft{n: n, rev: make([]int, n), tw: make([]complex128, n/2)}
	shift := bits.UintSize - bits.TrailingZeros(uint(n))
	for i := range n {
		if n > 1 {
			f.rev[i] = int(bits.Reverse(uint(i)) >> shift)
		}
	}
	for j := range f.tw {
		s, c := math.Sincos(-2 * math.Pi * float64(j) / float64(n))
		f.tw[j] = complex(c, s)
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
	for size := 2; size <= n; size <<= 1 {
		half, step := size/2, n/size
		for start := 0; start < n; start += size {
			for j := range half {
				w := f.tw[j*step]
				if inverse {
					w = complex(real(w), -imag(w))
				}
				u, v := a[start+j], a[start+j+half]*w
				a[start+j], a[start+j+half] = u+v, u-v
			}
		}
	}
}

// transform2 replaces the n x n row-major array a by its 2-D transform
// (rows, then columns), using col (length n) as scratch.
func (f *fft) transform2(a, col []complex128, inverse bool) {
	n := f.n
	for r := range n {
		f.transform(a[r*n:(r+1)*n], inverse)
	}
	for c := range n {
		for r := range n {
			col[r] = a[r*n+c]
		}
		f.transform(col, inverse)
		for r := range n {
			a[r*n+c] = col[r]
		}
	}
}
