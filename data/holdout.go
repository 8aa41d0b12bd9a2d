package data

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// DefaultHoldOutSeed fixes the validation split of `train --validation` so
// that every tuning run sees the same held-out examples.
const DefaultHoldOutSeed = 0x7a11d

// HoldOut splits d into a training part and a held-out validation part of
// size holdout, for tuning hyperparameters without touching the test set.
// The held-out indices are a uniformly random subset drawn from a PCG seeded
// with seed (a simulation generator: the split is public and reproducible,
// not secret); both parts keep the original order of their examples.
func (d *Dataset) HoldOut(holdout int, seed uint64) (train, validation *Dataset, err error) {
	if holdout < 1 || holdout >= d.N {
		return nil, nil, fmt.Errorf("validation must be in [1, %d) (the training set has %d examples), got %d", d.N, d.N, holdout)
	}
	perm := rand.New(rand.NewPCG(seed, 0x5b117)).Perm(d.N)
	held := slices.Clone(perm[:holdout])
	kept := slices.Clone(perm[holdout:])
	slices.Sort(held)
	slices.Sort(kept)
	if train, err = d.Subset(kept); err != nil {
		return nil, nil, err
	}
	if validation, err = d.Subset(held); err != nil {
		return nil, nil, err
	}
	return train, validation, nil
}
