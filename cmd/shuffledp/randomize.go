package main

import (
	"github.com/spf13/cobra"

	"github.com/shuffledp/shuffledp/cliflag"
	"github.com/shuffledp/shuffledp/randomizer"
)

func init() { rootCmd.AddCommand(newRandomizeCmd()) }

func newRandomizeCmd() *cobra.Command {
	var q randomizer.SampleRequest
	cmd := &cobra.Command{
		Use:   "randomize --randomizer R --eps0 E --dim D --input v1,...,vD --samples N",
		Short: "Randomize one input vector N times and print the decoded reports",
		Long:  longHelp("randomize"),
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return q.WriteSamples(cmd.OutOrStdout(), cmd.Flags().Changed("seed"))
		},
	}
	cliflag.MustBind(cmd.Flags(), &q)
	return cmd
}
