// Package shufflegauss computes the Rényi differential privacy (RDP) of the
// shuffle Gaussian mechanism and of its subsampled and shuffled check-in
// variants, following the ICLR 2023 submission "Shuffle Gaussian mechanism
// for differential privacy" (papers/shuffle-gaussian-iclr23-submission.txt).
//
// Every n clients add N(0, sigma^2) noise to a report of sensitivity 1 and a
// trusted shuffler permutes the noisy reports. Theorem 1 of the paper gives
//
//	A(lambda) = e^{-lambda/(2 sigma^2)} / n^lambda
//	            * sum_{k_1+...+k_n = lambda} multinom(lambda; k) e^{sum_i k_i^2/(2 sigma^2)},
//	eps(lambda) = log A(lambda) / (lambda - 1).
//
// The paper evaluates the sum by enumerating integer partitions and could
// only reach orders of about 30 to 100 (its conclusion lists large orders as
// an open problem). This package evaluates it exactly at every integer order
// up to 65536 in O(lambda^2) work for all orders at once: the sum equals
// lambda! [x^lambda] f(x)^n with f(x) = sum_j e^{j^2/(2 sigma^2)} x^j / j!, whose
// power-series coefficients follow J.C.P. Miller's recurrence (all terms
// non-negative when lambda <= n+1) or, when lambda > n+1, binary powering of
// the series with binomial-mixture convolutions (also all terms
// non-negative). Everything runs in log space.
//
// Assumption inherited from the paper (stated, not proven there): Theorem 1
// is the Rényi divergence D_lambda(M(D') || M(D)) for the single pair
// D = (0,...,0), D' = (1,0,...,0). The paper asserts this pair and this
// direction are the worst case over all adjacent datasets; the reverse
// direction D_lambda(M(D) || M(D')) and other pairs are not covered by a
// proof. The RDP values here are therefore exactly as strong as that claim,
// a CONJECTURE: for pairs whose changed report moves by at most one unit
// (zero-out at sigma) it is false (n = 2, sigma = 1, order 2: the pair
// (x, -x) vs (0, -x), |x| = 1, has D_2 = 0.951458 against Theorem 1's
// 0.620115; docs/proofs/shuffle-gaussian.md); package route evaluates
// these curves at sigma/2 (replace-one, where no counterexample is known),
// labels them conjectures and keeps them out of "best".
package shufflegauss
