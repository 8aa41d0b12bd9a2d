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
// summary at delta (0: each shard's registered delta) and their maximum. A
// shard with no rows yet has epsilon 0.
func Epsilons(ctx context.Context, store ledger.Store, plan Plan, delta float64) (Report, error) {
	ids := make([]string, len(plan.Parts))
	for i, part := range plan.Parts {
		ids[i] = part.Run
	}
	return epsilons(ctx, store, plan.Run, ids, delta)
}

// Find returns the sharded runs of store (the runs some ledger run id of
// RunID form names, with at least one row) and, for each, its number of
// shards. A run with rows in two different numbers of shards is an error.
// A shard run registered without rows (a shuffler started with another
// --shards than the server's opens its ledger rows, then is refused by
// the server) is left out.
func Find(ctx context.Context, store ledger.Store) (map[string]int, error) {
	runs, err := store.Runs(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, id := range runs {
		run, _, S, err := ParseRunID(id)
		if err != nil || S < 2 {
			continue
		}
		info, err := store.Run(ctx, id)
		if err != nil {
			return nil, err
		}
		if info.Entries == 0 {
			continue
		}
		if prev, ok := out[run]; ok && prev != S {
			return nil, fmt.Errorf("run %q has ledger rows in %d shards and in %d", run, prev, S)
		}
		out[run] = S
	}
	return out, nil
}

// EpsilonsOf is Epsilons for run's shards as the ledger names them
// (RunID(run, i, shards) for i < shards), when the plan is not at hand.
func EpsilonsOf(ctx context.Context, store ledger.Store, run string, shards int, delta float64) (Report, error) {
	if shards < 2 {
		return Report{}, fmt.Errorf("shards must be >= 2, got %d", shards)
	}
	ids := make([]string, shards)
	for i := range ids {
		ids[i] = RunID(run, i, shards)
	}
	return epsilons(ctx, store, run, ids, delta)
}

func epsilons(ctx context.Context, store ledger.Store, run string, ids []string, delta float64) (Report, error) {
	r := Report{Run: run, Shards: make([]ledger.Summary, len(ids))}
	for i, id := range ids {
		s, err := ledger.Summarize(ctx, store, id, delta, false)
		if errors.Is(err, ledger.ErrUnknownRun) {
			s, err = ledger.Summary{Run: id, Delta: delta}, nil
		}
		if err != nil {
			return Report{}, fmt.Errorf("shard %d (%s): %w", i, id, err)
		}
		r.Shards[i] = s
		if i == 0 || s.Epsilon > r.Epsilon {
			r.Epsilon, r.Worst = s.Epsilon, i
		}
	}
	return r, nil
}
