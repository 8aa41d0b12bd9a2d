package client

import (
	"fmt"
	"math"

	"github.com/shuffledp/shuffledp/randomizer"
)

// CheckIn is a client's own decision to take part in a round of shuffled
// check-in (Liew et al. 2022; ICLR'23 submission Sec. 4.2): true with
// probability rate, drawn from the client's randomness src and nothing else
// (not its data, not the server's or the shuffler's choice), so that the
// number and the identity of the clients that report are independent of
// every client's data, as the check-in analysis (eq. (11)) assumes.
//
// The draw is exact: one uniform 64-bit word compared with
// floor(rate * 2^64) (randomizer.Bernoulli), which equals rate * 2^64 for
// every float64 rate >= 2^-11; rate 1 always checks in. A deployment passes
// crypto/rand (randomizer.NewCryptoSource); a simulation a seeded stream
// per client and round (SIMULATION ONLY).
func CheckIn(rate float64, src randomizer.Source) (bool, error) {
	if !(rate > 0 && rate <= 1) {
		return false, fmt.Errorf("rate must be in (0, 1], got %g", rate)
	}
	if rate == 1 {
		src.Uint64() // one draw either way, so streams stay aligned
		return true, nil
	}
	return randomizer.Bernoulli(src, uint64(math.Ldexp(rate, 64))), nil
}
