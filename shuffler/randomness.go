package shuffler

import (
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

func (c *cryptoRandomness) Round(sample []int) (randomizer.Source, error) {
	if len(sample) > 0 { // empty under check-in: the clients decide
		c.sampler.Sample(c.rng, sample)
	}
	return c.src, nil
}
