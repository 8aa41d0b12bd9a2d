// Package randomizer provides eps0-LDP local randomizers for federated
// learning in the shuffle model, the norm clipping that puts a gradient in a
// randomizer's input domain, a versioned binary wire format for the reports,
// and the sources of randomness the randomizers draw from.
//
// # Randomizers
//
// Every randomizer implements [Randomizer]. [New] builds one by name:
//
//	"rr"       binary randomized response on one bit (Warner 1965)
//	"krr"      k-ary randomized response on a one-hot vector of length k
//	"rinf"     R_inf of Girgis et al. (AISTATS'21, arXiv 2008.07180), input in B_inf(a)
//	"r1"       R_1 of Girgis et al., input in B_1(a), Walsh–Hadamard basis
//	"r2"       R_2 = Quan∘Priv of Girgis et al., input in B_2(a)
//	"privunit" PrivUnit2 of Bhowmick et al. (arXiv 1812.00984), input in B_2(a)
//	"gaussian" the Gaussian randomizer of shuffle-Gaussian SGD (not pure LDP)
//
// The discrete randomizers (rr, krr, rinf, r1) also implement [Discrete],
// which exposes the exact probability of every output for a given input;
// [Audit] (and `shuffledp audit`) uses it to verify the eps0-LDP ratio bound
// and the unbiasedness of decoding exactly, not statistically. R_2 and
// PrivUnit have continuous internal randomness; they implement [Bounded]
// (the analytic worst-case ratio from the realised coins, [AuditBound]) and
// are tested statistically.
//
// # One round of CLDP-SGD (NeurIPS'21 Algorithm 1) through this package
//
//	r, err := randomizer.New("rinf", randomizer.Config{Eps0: 2, Dim: d, Radius: C})
//	// client i (d = len(grad)), src = randomizer.NewCryptoSource():
//	randomizer.Clip(r.Norm(), grad, r.Radius())  // into the ball r expects
//	rep, err := r.Randomize(grad, src)           // eps0-LDP report, a few bytes
//	// shuffler (package shuffler): report bytes only, uniform permutation
//	shuffled, err := s.Shuffle(reports)
//	// server:
//	err = randomizer.AddDecodedAll(r, shuffled, 1.0/k, sum) // sum = mean estimate
//
// or, report by report, r.AddDecoded(rep, 1.0/k, sum).
//
// AddDecoded adds scale·Decode(report) to a running sum without building a
// dense vector, so aggregating k sparse R_inf reports costs O(k), not
// O(k·d). [AddDecodedAll] additionally batches R_1 reports into one fast
// Walsh–Hadamard transform (O(k + d log d) instead of O(k·d)).
//
// # Randomness
//
// Randomizers draw all their randomness from a [Source]. [NewCryptoSource]
// (crypto/rand) is the default and the only source fit for deployment.
// [NewSeededSource] (PCG from math/rand/v2) is for reproducible simulation
// and tests only: its output is predictable from the seed, so noise drawn
// from it protects nothing.
//
// Bernoulli draws are integer comparisons of a uniform 64-bit word against
// a threshold t, so a coin that should land heads with probability p lands
// heads with probability exactly t/2^64. Thresholds are rounded so that the
// realised probabilities themselves satisfy the eps0-LDP ratio bound (see
// [Threshold]); they differ from the ideal probabilities by less than 2^-64
// for input-independent coins and 2^-63 for input-dependent ones (one more
// rounding of the interpolation). Indices are drawn without modulo bias
// ([UniformIndex]).
package randomizer
