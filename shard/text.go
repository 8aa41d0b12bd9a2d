package shard

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"text/tabwriter"

	"github.com/shuffledp/shuffledp/internal/directed"
	"github.com/shuffledp/shuffledp/ledger"
)

// Show is the question of `shuffledp ledger shards` (its flags in the
// tags): a sharded run's epsilon per shard and the run's.
type Show struct {
	ledger.Source
	// Run is the sharded run ("": the ledger's only one).
	Run string `flag:"run" usage:"the run id (default: the ledger's only sharded run)"`
	// Delta converts at this delta (0: each shard's).
	Delta float64 `flag:"delta" kind:"fraction" usage:"delta in (0,1) to convert at (default: each shard's, the shuffler's --delta)"`
}

// Report opens q's source read-only, finds the run's shards (Find; the
// only sharded run when q.Run is empty) and returns their epsilons
// (EpsilonsOf). Errors name --run.
func (q Show) Report(ctx context.Context) (Report, error) {
	store, _, err := q.Open(ctx)
	if err != nil {
		return Report{}, err
	}
	defer store.Close()
	found, err := Find(ctx, store)
	if err != nil {
		return Report{}, err
	}
	run := q.Run
	if run == "" && len(found) != 1 {
		return Report{}, fmt.Errorf("--run is required: the ledger holds %d sharded runs %v", len(found), slices.Sorted(maps.Keys(found)))
	}
	if run == "" {
		run = slices.Sorted(maps.Keys(found))[0]
	}
	if found[run] == 0 {
		return Report{}, fmt.Errorf("--run: the ledger has no shard of run %q", run)
	}
	return EpsilonsOf(ctx, store, run, found[run], q.Delta)
}

// WriteText writes r as `ledger shards` prints it: a table of the shards
// (ledger run, rounds, epsilon, delta) and a last line with the run's
// epsilon, their maximum.
func (r Report) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "shard\tledger run\trounds\tepsilon\tdelta\n")
	for i, s := range r.Shards {
		fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%g\n", i, s.Run, s.Rounds, directed.Upper(s.Epsilon, directed.Digits), s.Delta)
	}
	fmt.Fprintf(tw, "run %s\t(max over %d shards: every client's guarantee)\t\t%s\t\n", r.Run, len(r.Shards), directed.Upper(r.Epsilon, directed.Digits))
	return tw.Flush()
}

// WriteJSON writes r as `ledger shards --json` prints it: one JSON object
// indented by two spaces.
func (r Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
