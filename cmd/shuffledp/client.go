package main

import (
	"log"

	"github.com/spf13/cobra"

	"github.com/shuffledp/shuffledp/cliflag"
	"github.com/shuffledp/shuffledp/deploy"
)

func init() { rootCmd.AddCommand(newClientCmd()) }

func newClientCmd() *cobra.Command {
	var p deploy.ClientProcess
	cmd := &cobra.Command{
		Use:   "client --shuffler ADDR --server ADDR --clients LO:HI --data-dir DIR --pki DIR --credentials FILE",
		Short: "Run a pool of clients of a networked run (one process, many simulated clients)",
		Long:  longHelp("client"),
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signalContext(commandContext(cmd))
			defer stop()
			p.Stderr, p.Pool.Log = cmd.ErrOrStderr(), log.New(cmd.ErrOrStderr(), "client: ", 0)
			return orInterrupted(ctx, deploy.RunClients(ctx, p))
		},
	}
	cliflag.MustBind(cmd.Flags(), &p)
	return cmd
}
