package randomizer

import (
	"math"
	"math/bits"
)

// FWHT replaces v (length a power of 2) in place by H·v, where H is the
// unnormalised Sylvester–Hadamard matrix, H_{ij} = (−1)^popcount(i AND j).
// It runs the fast Walsh–Hadamard transform in O(n log n) additions and
// never builds H.
func FWHT(v []float64) {
	n := len(v)
	if n&(n-1) != 0 {
		panic("randomizer: FWHT needs a power-of-two length")
	}
	for h := 1; h < n; h <<= 1 {
		for i := 0; i < n; i += h << 1 {
			a, b := v[i:i+h], v[i+h:i+2*h]
			for k := range a {
				x, y := a[k], b[k]
				a[k], b[k] = x+y, x-y
			}
		}
	}
}

// hadamardSign returns H_{ij} = (−1)^popcount(i AND j).
func hadamardSign(i, j int) float64 {
	if bits.OnesCount(uint(i&j))&1 == 1 {
		return -1
	}
	return 1
}

// signBit returns 1<<63 when H_{ij} = −1 and 0 otherwise, for flipping the
// sign of a float64 without a branch.
func signBit(i, j int) uint64 {
	return uint64(bits.OnesCount(uint(i&j))&1) << 63
}

// hadamardRow returns (H x)_j = Σ_i H_{ji} x_i for x of length ≤ the
// padded dimension (missing entries are zero), in O(len(x)).
func hadamardRow(x []float64, j int) float64 {
	var s0, s1 float64
	i := 0
	for ; i+2 <= len(x); i += 2 {
		s0 += math.Float64frombits(math.Float64bits(x[i]) ^ signBit(i, j))
		s1 += math.Float64frombits(math.Float64bits(x[i+1]) ^ signBit(i+1, j))
	}
	if i < len(x) {
		s0 += math.Float64frombits(math.Float64bits(x[i]) ^ signBit(i, j))
	}
	return s0 + s1
}
