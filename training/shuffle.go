package training

import (
	"fmt"

	"github.com/shuffledp/shuffledp/randomizer"
	"github.com/shuffledp/shuffledp/shuffler"
)

// shuffleSlot is the slot number, beyond any client's, under which the
// shuffler's per-round ChaCha8 key is derived (see clientKey).
const shuffleSlot = ^uint64(0)

// newRoundShuffler returns the shuffler of Algorithm 1, line 9, refusing
// batches smaller than k (the accountant assumes exactly k reports are
// shuffled together), and the source it draws its permutations from:
// reseeded every round from the run's seed in simulation, crypto/rand with
// crypto noise.
func newRoundShuffler(k int, crypto bool) (*shuffler.Shuffler, *clientSource, error) {
	src := &clientSource{}
	if crypto {
		src.crypto = randomizer.NewCryptoSource()
	}
	s, err := shuffler.New(k, shuffler.WithSource(src))
	if err != nil {
		return nil, nil, err
	}
	return s, src, nil
}

// shuffle is Algorithm 1, line 9: the shuffler receives the k report
// byte strings (no slot, client index or arrival order) and releases them
// in a uniformly random order, which replaces the batch.
//
// In simulation the permutation cannot change the server's sum (addition
// is commutative in distribution; the decoded sum is the same multiset),
// but the reports still go through the real shuffler so that the code path
// — batch-size check, equal-length check, copies — is the deployed one.
func (t *Trainer) shuffle(roundKey uint64) error {
	b := t.reports
	t.shufSrc.reset(t.cfg.Seed, roundKey, shuffleSlot)
	in := b.raw[:0]
	for _, r := range b.reports {
		in = append(in, r)
	}
	out, err := t.shuf.Shuffle(in)
	if err != nil {
		return fmt.Errorf("shuffler: %w", err)
	}
	for i, r := range out {
		b.reports[i] = r
	}
	b.raw = in
	return nil
}
