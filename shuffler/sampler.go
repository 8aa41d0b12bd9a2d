package shuffler

import (
	"fmt"
	"math/rand/v2"
)

// Sampler draws the set U_t of k distinct clients out of n in each round
// (NeurIPS'21 Algorithm 1, line 3: "A random set U_t of k clients is
// chosen"), uniformly among all k-subsets, which is the sampling the
// subsampled-shuffle privacy analysis (Theorem 1) assumes.
//
// It runs a partial Fisher–Yates shuffle over a scratch copy of 0..n-1
// that is reset every round, so the only state carried between rounds is
// the random generator's.
type Sampler struct {
	n, k    int
	scratch []int32
}

// NewSampler returns a sampler of k out of n clients.
func NewSampler(n, k int) (*Sampler, error) {
	if k < 1 || k > n {
		return nil, fmt.Errorf("sample must be in [1, clients=%d], got %d", n, k)
	}
	return &Sampler{n: n, k: k, scratch: make([]int32, n)}, nil
}

// Sample writes k distinct client indices in [0, n) into out (length k),
// drawing randomness from r (math/rand/v2's IntN is unbiased). Every
// k-subset is equally likely and, given the subset, every order is
// equally likely. An empty out draws nothing (a check-in round samples
// nobody: the clients decide).
func (s *Sampler) Sample(r *rand.Rand, out []int) {
	if len(out) == 0 {
		return
	}
	for i := range s.scratch {
		s.scratch[i] = int32(i)
	}
	for i := 0; i < s.k; i++ {
		j := i + r.IntN(s.n-i)
		s.scratch[i], s.scratch[j] = s.scratch[j], s.scratch[i]
		out[i] = int(s.scratch[i])
	}
}
