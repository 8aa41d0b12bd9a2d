package shard

import (
	"context"
	"errors"
	"fmt"

	"github.com/shuffledp/shuffledp/ledger"
)

// Report is a sharded run's privacy as its ledger records it: every
// shard's summary (its own rows, priced with its own n_s and k_s) and the
// run's epsilon, the maximum over the shards.
type Report struct {
	Run    string           `json:"run"`
	Shards []ledger.Summary `json:"shards"`
	// Epsilon is the largest shard epsilon: the guarantee of every client
	// of the run (docs/proofs/shards.md), each client's own being its
	// shard's.
	Epsilon float64 `json:"epsilon"`
	// Worst is the shard attaining Epsilon.
	Worst int `json:"worst_shard"`
}

// Epsilons reads plan's shards from store and returns each shard's
// summary at delta and their maximum. A shard with no rows yet has
// epsilon 0.
func Epsilons(ctx context.Context, store ledger.Store, plan Plan, delta float64) (Report, error) {
	r := Report{Run: plan.Run, Shards: make([]ledger.Summary, len(plan.Parts))}
	for i, part := range plan.Parts {
		s, err := ledger.Summarize(ctx, store, part.Run, delta, false)
		if errors.Is(err, ledger.ErrUnknownRun) {
			s, err = ledger.Summary{Run: part.Run, Delta: delta}, nil
		}
		if err != nil {
			return Report{}, fmt.Errorf("shard %d (%s): %w", i, part.Run, err)
		}
		r.Shards[i] = s
		if i == 0 || s.Epsilon > r.Epsilon {
			r.Epsilon, r.Worst = s.Epsilon, i
		}
	}
	return r, nil
}
