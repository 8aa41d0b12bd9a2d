package training

import "github.com/shuffledp/shuffledp/accounting"

// subsampledShuffleCurve returns the per-round RDP curve the ledger
// composes for n clients, k sampled per round (without replacement) and an
// eps0-LDP randomizer: accounting.Best, at every order the smallest valid
// upper bound among NeurIPS'21 Theorem 1, the CCS'21 Thm 3.1 + WBK19
// subsampling baseline and the pure-DP bound (and CCS'21 Thms 3.1/3.3 when
// k = n).
func subsampledShuffleCurve(n, k int, eps0 float64) (accounting.RDP, error) {
	return accounting.Best(int64(n), int64(k), eps0)
}
