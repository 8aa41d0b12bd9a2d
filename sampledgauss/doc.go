// Package sampledgauss computes the Rényi differential privacy (RDP) of the
// sampled Gaussian mechanism (SGM), the central-DP baseline of DP-SGD:
// every record is included independently with probability q (Poisson
// sampling at rate q), the included records' values (L2 norm at most 1, in
// units of the clipping norm) are summed, and N(0, sigma^2 I) is added.
//
// Mironov, Talwar and Zhang, "Rényi Differential Privacy of the Sampled
// Gaussian Mechanism" (arXiv:1908.10530, 2019), Sec. 3, reduce the RDP of
// the SGM under adding or removing one record to one dimension: with
// mu0 = N(0, sigma^2), mu1 = N(1, sigma^2) and mu = (1-q) mu0 + q mu1, the
// SGM is (alpha, eps)-RDP with
//
//	eps(alpha) = log(A_alpha) / (alpha - 1),  A_alpha = E_{z~mu0}[(mu(z)/mu0(z))^alpha],
//
// because the other direction, B_alpha = E_{z~mu}[(mu0(z)/mu(z))^alpha], never
// exceeds A_alpha (proved in the same section). The value is exact (the
// RDP curve of the mechanism, not a bound on it) and is what TF Privacy's
// rdp_accountant and Opacus compute; this package computes it as a
// rigorous upper bound that is never below the exact value:
//
//   - integer alpha (Sec. 3.3): the finite binomial sum
//     A_alpha = sum_{k=0..alpha} C(alpha,k) (1-q)^{alpha-k} q^k e^{(k^2-k)/(2 sigma^2)};
//   - fractional alpha (Sec. 3.4): A_alpha = A1 + A2, the two series
//     obtained by splitting the real line at z0 = sigma^2 log(1/q - 1) + 1/2,
//     where q mu1(z) = (1-q) mu0(z), and expanding (1 + u)^alpha binomially
//     on each side (Phi the standard normal CDF):
//     A1 = sum_{k>=0} C(alpha,k) (1-q)^{alpha-k} q^k e^{(k^2-k)/(2 sigma^2)} Phi((z0-k)/sigma),
//     A2 = sum_{k>=0} C(alpha,k) (1-q)^k q^{alpha-k} e^{((alpha-k)^2-(alpha-k))/(2 sigma^2)} Phi((alpha-k-z0)/sigma).
//     Beyond k = floor(alpha) both series alternate; they are truncated
//     only with a proven bound on the remainder added (tail.go), never by a
//     heuristic stopping rule;
//   - q = 1: the Gaussian mechanism, eps(alpha) = alpha/(2 sigma^2).
//
// Everything runs in log space. For accuracy when eps is tiny (small q,
// large sigma), the package sums A_alpha - 1, not A_alpha: for integer
// orders the non-negative terms C(alpha,k)(1-q)^{alpha-k} q^k
// (e^{(k^2-k)/(2 sigma^2)} - 1), k >= 2; for fractional orders
// E[(1+qW)^alpha - 1 - alpha q W], W = mu1/mu0 - 1, on each side of z0
// (fractional.go). Every term carries a bound on its floating-point error,
// and the result is the computed value plus the sum of those bounds and of
// the remainder brackets, so it is an upper bound on the exact RDP.
//
// Accuracy: against a 50-digit mpmath integration of A_alpha over the real
// line (testdata/gen_golden.py; 418 points with q in [1e-7, 1], sigma in
// [0.1, 100], integer and fractional orders 1.01..256.1) the result is
// never below the exact value, and above it by at most 2e-9 relative
// except at q >= 0.5 with sigma = 50 and order <= 1.1 (at most 7.8e-8).
// For fractional orders the series' terms cancel: their size exceeds
// A_alpha - 1 by about sigma^2/(alpha (alpha-1) q^2) when z0 is within a few
// sigma of 0 (q near 1/2), and the rounding slack, about 1e-13 of the
// terms, grows with that ratio; the bound stays rigorous but loosens.
package sampledgauss
