package training

import "math/rand/v2"

// ClientSampler draws the set U_t of k distinct clients out of n in each
// round (NeurIPS'21 Algorithm 1, line 3: "A random set U_t of k clients is
// chosen"), uniformly among all k-subsets, which is the sampling the
// subsampled-shuffle privacy analysis (Theorem 1) assumes.
//
// It runs a partial Fisher–Yates shuffle over a scratch copy of 0..n-1
// that is reset every round, so the only state carried between rounds is
// the random generator's: a round's sample depends on the generator state
// alone, which keeps checkpoints small.
type ClientSampler struct {
	n, k    int
	scratch []int32
}

// NewClientSampler returns a sampler of k out of n clients; it panics
// unless 1 <= k <= n (callers validate flags first).
func NewClientSampler(n, k int) *ClientSampler {
	if k < 1 || k > n {
		panic("training: NewClientSampler needs 1 <= k <= n")
	}
	return &ClientSampler{n: n, k: k, scratch: make([]int32, n)}
}

// Sample writes k distinct client indices in [0, n) into out (length k),
// drawing randomness from r. Every k-subset is equally likely and, given
// the subset, every order is equally likely.
func (s *ClientSampler) Sample(r *rand.Rand, out []int) {
	for i := range s.scratch {
		s.scratch[i] = int32(i)
	}
	for i := 0; i < s.k; i++ {
		j := i + r.IntN(s.n-i)
		s.scratch[i], s.scratch[j] = s.scratch[j], s.scratch[i]
		out[i] = int(s.scratch[i])
	}
}
