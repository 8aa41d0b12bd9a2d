// Package approxdp implements the approximate-DP route to privacy accounting
// in the shuffle model, the baseline that the Rényi-DP accountant in package
// accounting is compared against (NeurIPS'21, Girgis et al., Fig. 2 curve (iv)):
//
//  1. amplification by shuffling, Feldman–McMillan–Talwar 2020 ("Hiding
//     among the clones", arXiv 2012.12803): the closed form of their
//     Theorem 3.1 (ClosedFormEpsilon) and their numerical clones bound
//     (NumericalEpsilon, NumericalDelta), re-derived and computed exactly per
//     clone count in log space;
//  2. amplification by subsampling without replacement (Ullman 2017,
//     CS7880 notes; UllmanSubsample);
//  3. strong composition of T identical rounds, Kairouz–Oh–
//     Viswanath 2015 Theorem 3.5 (KOV15Epsilon);
//  4. the pipeline 1→2→3 with the total delta split optimally between the
//     per-round delta and the composition slack (SubsampledShuffleKOV15).
//
// Every function returns an upper bound on the epsilon it names (rounded
// the conservative way) or an error naming the offending parameter; none
// returns NaN, Inf or a negative epsilon.
package approxdp
