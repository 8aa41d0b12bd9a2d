package shuffler

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/shuffledp/shuffledp/randomizer"
)

// Randomness is where the shuffler's random choices come from: each
// round's sample of clients and the permutation of its batch.
type Randomness interface {
	// Round writes the new round's sample, len(sample) distinct clients
	// out of the run's n, into sample and returns the source of that
	// round's permutation (used until the next call). Under check-in
	// sample is empty: nobody is sampled, only the permutation's source
	// is drawn.
	Round(sample []int) (randomizer.Source, error)
}

// cryptoRandomness draws everything from crypto/rand.
type cryptoRandomness struct {
	sampler *Sampler
	src     randomizer.Source
	rng     *rand.Rand
}

// NewCryptoRandomness returns the deployment's Randomness: samples of k out
// of n clients and permutations, all drawn from crypto/rand (unbiased
// index draws).
func NewCryptoRandomness(n, k int) (Randomness, error) {
	s, err := NewSampler(n, k)
	if err != nil {
		return nil, err
	}
	src := randomizer.NewCryptoSource()
	return &cryptoRandomness{sampler: s, src: src, rng: rand.New(src)}, nil
}

// CheckInSelector is the Randomness of a service that flips the check-in
// coins itself (ServiceConfig.SelectCheckIn).
type CheckInSelector interface {
	// CheckIn returns sel[:0] with every client of [0, n) appended, in
	// increasing order, whose own coin with probability rate came up (one
	// independent coin per client), and the source of the round's
	// permutation (used until the next call).
	CheckIn(n int, rate float64, sel []int) ([]int, randomizer.Source, error)
}

// CheckIn implements CheckInSelector from crypto/rand: each client's coin
// is one uniform 64-bit word compared with floor(rate * 2^64)
// (randomizer.Bernoulli), exactly rate for every float64 rate >= 2^-11;
// rate 1 selects everyone (one word drawn per client either way).
func (c *cryptoRandomness) CheckIn(n int, rate float64, sel []int) ([]int, randomizer.Source, error) {
	return checkInCoins(c.src, n, rate, sel)
}

// checkInCoins draws n independent coins of probability rate from src.
func checkInCoins(src randomizer.Source, n int, rate float64, sel []int) ([]int, randomizer.Source, error) {
	if !(rate > 0 && rate <= 1) {
		return nil, nil, fmt.Errorf("rate (check-in probability) must be in (0, 1], got %g", rate)
	}
	t := uint64(math.MaxUint64)
	if rate < 1 {
		t = uint64(math.Ldexp(rate, 64))
	}
	sel = sel[:0]
	for i := range n {
		if src.Uint64() < t || rate == 1 {
			sel = append(sel, i)
		}
	}
	return sel, src, nil
}

func (c *cryptoRandomness) Round(sample []int) (randomizer.Source, error) {
	if len(sample) > 0 { // empty under check-in: the clients decide
		c.sampler.Sample(c.rng, sample)
	}
	return c.src, nil
}
