package training

import (
	"encoding/binary"
	"math/rand/v2"

	"github.com/shuffledp/shuffledp/randomizer"
	"github.com/shuffledp/shuffledp/shuffler"
)

// shuffleSlot is the slot number, beyond any client's, under which the
// shuffler's per-round ChaCha8 key is derived (see clientKey).
const shuffleSlot = ^uint64(0)

// simRandomness is the shuffler's Randomness in simulation: the run's
// sequential generator (PCG seeded by Config.Seed; its state is
// checkpointed) draws each round's sample of k clients and then the
// round's key, from which every client's noise stream (clientKey with the
// client's slot) and the permutation's stream (slot shuffleSlot) are
// derived. With CryptoNoise the permutation comes from crypto/rand; the
// sample stays seeded.
//
// SIMULATION ONLY: the sample and the permutation are predictable from
// the seed. A deployment uses shuffler.NewCryptoRandomness.
type simRandomness struct {
	seed     uint64
	master   *rand.PCG
	rng      *rand.Rand
	sampler  *shuffler.Sampler
	roundKey uint64 // key of the current round's noise, drawn after the sample
	perm     clientSource
}

// newSimGenerator returns the run's sequential generator for seed.
func newSimGenerator(seed uint64) *rand.PCG { return rand.NewPCG(seed, 0x636c6470736764) } // "cldpsgd"

func newSimRandomness(cfg Config) (*simRandomness, error) {
	sampler, err := shuffler.NewSampler(cfg.Clients, cfg.Sample)
	if err != nil {
		return nil, err
	}
	s := &simRandomness{seed: cfg.Seed, master: newSimGenerator(cfg.Seed), sampler: sampler}
	s.rng = rand.New(s.master)
	if cfg.CryptoNoise {
		s.perm.crypto = randomizer.NewCryptoSource()
	}
	return s, nil
}

// Round implements shuffler.Randomness.
func (s *simRandomness) Round(sample []int) (randomizer.Source, error) {
	if len(sample) > 0 { // empty under check-in: the clients decide
		s.sampler.Sample(s.rng, sample)
	}
	s.roundKey = s.rng.Uint64()
	s.perm.reset(s.seed, s.roundKey, shuffleSlot)
	return &s.perm, nil
}

// clientKey derives the 32-byte ChaCha8 key of one client's noise in one
// round from the run's seed, the round's key (drawn from the run's
// sequential generator) and the client's slot in the round's sample.
// ChaCha8 is a pseudorandom function of its key, so distinct keys give
// independent-looking streams, and a client's noise does not depend on
// which worker computes it.
func clientKey(seed, roundKey, slot uint64) [32]byte {
	var k [32]byte
	binary.LittleEndian.PutUint64(k[0:], seed)
	binary.LittleEndian.PutUint64(k[8:], roundKey)
	binary.LittleEndian.PutUint64(k[16:], slot)
	copy(k[24:], "cldp-sgd")
	return k
}

// clientSource is the randomness of one client in one round: a ChaCha8
// stream keyed, in simulation, by (seed, round key, slot), so a client's
// noise is the same whichever worker computes it (SIMULATION ONLY: the
// noise is predictable from the seed); with crypto set (--crypto-noise),
// keyed instead by 256 bits from crypto/rand drawn afresh for every client
// and round. ChaCha8 is a cryptographically strong generator (math/rand/v2:
// the runtime's own), so the second is deployment-grade noise at ChaCha8's
// speed: the d normals of a Gaussian report cost ~6x less than drawing
// every word from crypto/rand (BENCHMARKS.md, Gaussian noise), and runs are
// then not reproducible.
type clientSource struct {
	ch     *rand.ChaCha8
	crypto randomizer.Source
}

func (s *clientSource) reset(seed, roundKey, slot uint64) {
	var k [32]byte
	if s.crypto != nil {
		for i := range 4 {
			binary.LittleEndian.PutUint64(k[8*i:], s.crypto.Uint64())
		}
	} else {
		k = clientKey(seed, roundKey, slot)
	}
	if s.ch == nil {
		s.ch = rand.NewChaCha8(k)
	} else {
		s.ch.Seed(k)
	}
}

// Uint64 implements randomizer.Source.
func (s *clientSource) Uint64() uint64 { return s.ch.Uint64() }

// stream returns the ChaCha8 generator itself, valid until the next reset:
// the same words in the same order as Uint64, without the wrapper's call
// per word (a randomizer drawing d normals calls it d times).
func (s *clientSource) stream() *rand.ChaCha8 { return s.ch }
