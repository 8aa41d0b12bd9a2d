package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/shuffledp/shuffledp/cliflag"
	"github.com/shuffledp/shuffledp/ledger"
	"github.com/shuffledp/shuffledp/shard"
)

func init() {
	rootCmd.AddCommand(newLedgerCmd())
}

func newLedgerCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ledger",
		Short: "Inspect the durable privacy ledger of a run (state directory or PostgreSQL)",
		Long:  longHelp("ledger"),
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newLedgerShowCmd(), newLedgerCheckCmd(), newLedgerShardsCmd())
	return cmd
}

func newLedgerShowCmd() *cobra.Command {
	var f struct {
		ledger.Show
		JSON bool `flag:"json" usage:"print one JSON object"`
	}
	cmd := &cobra.Command{
		Use:   "show --state DIR | --ledger URL",
		Short: "Print a run's rounds, (epsilon, delta) and privacy events",
		Long:  longHelp("ledger_show"),
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("delta") && !(f.Delta > 0 && f.Delta < 1) {
				return fmt.Errorf("--delta must be in (0,1), got %g", f.Delta)
			}
			r, err := f.Report(cmd.Context())
			if err != nil {
				return err
			}
			if f.JSON {
				return r.WriteJSON(cmd.OutOrStdout())
			}
			if err := r.WriteText(cmd.OutOrStdout()); err != nil {
				return err
			}
			if r.AtGridEdge {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: the optimal order %g is at the edge of the run's grid\n", r.Order)
			}
			return nil
		},
	}
	cliflag.MustBind(cmd.Flags(), &f)
	return cmd
}

func newLedgerCheckCmd() *cobra.Command {
	var src ledger.Source
	cmd := &cobra.Command{
		Use:   "check --state DIR | --ledger URL",
		Short: "Verify the ledger's integrity (the database's own checks, every entry decodes, counts agree)",
		Long:  longHelp("ledger_check"),
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			store, name, err := src.Open(cmd.Context())
			if err != nil {
				return err
			}
			defer store.Close()
			c, err := ledger.CheckAll(cmd.Context(), store)
			if err != nil {
				return err
			}
			return c.WriteText(cmd.OutOrStdout(), name)
		},
	}
	cliflag.MustBind(cmd.Flags(), &src)
	return cmd
}

func newLedgerShardsCmd() *cobra.Command {
	var f struct {
		shard.Show
		JSON bool `flag:"json" usage:"print one JSON object"`
	}
	cmd := &cobra.Command{
		Use:   "shards --ledger URL [--run RUN]",
		Short: "Print a sharded run's epsilon per shard and the run's, their maximum (docs/shards.md)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, err := f.Report(cmd.Context())
			if err != nil {
				return err
			}
			if f.JSON {
				return r.WriteJSON(cmd.OutOrStdout())
			}
			return r.WriteText(cmd.OutOrStdout())
		},
	}
	cliflag.MustBind(cmd.Flags(), &f)
	return cmd
}
