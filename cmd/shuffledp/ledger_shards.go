package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/shuffledp/shuffledp/shard"
)

func newLedgerShardsCmd() *cobra.Command {
	var (
		src    ledgerSource
		run    string
		delta  float64
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "shards --ledger URL [--run RUN]",
		Short: "Print a sharded run's epsilon per shard and the run's, their maximum (docs/shards.md)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			store, _, err := src.open(cmd)
			if err != nil {
				return err
			}
			defer store.Close()
			found, err := shard.Find(cmd.Context(), store)
			if err != nil {
				return err
			}
			if run == "" && len(found) != 1 {
				return fmt.Errorf("--run is required: the ledger holds %d sharded runs %v", len(found), slices.Sorted(maps.Keys(found)))
			}
			if run == "" {
				run = slices.Sorted(maps.Keys(found))[0]
			}
			if found[run] == 0 {
				return fmt.Errorf("--run: the ledger has no shard of run %q", run)
			}
			r, err := shard.EpsilonsOf(cmd.Context(), store, run, found[run], delta)
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(r)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintf(tw, "shard\tledger run\trounds\tepsilon\tdelta\n")
			for i, s := range r.Shards {
				fmt.Fprintf(tw, "%d\t%s\t%d\t%.6g\t%g\n", i, s.Run, s.Rounds, s.Epsilon, s.Delta)
			}
			fmt.Fprintf(tw, "run %s\t(max over %d shards: every client's guarantee)\t\t%.6g\t\n", r.Run, len(r.Shards), r.Epsilon)
			return tw.Flush()
		},
	}
	src.addFlags(cmd)
	cmd.Flags().StringVar(&run, "run", "", "the run id (default: the ledger's only sharded run)")
	cmd.Flags().Var(fractionFlag{&delta}, "delta", "delta in (0,1) to convert at (default: each shard's, the shuffler's --delta)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object")
	return cmd
}
