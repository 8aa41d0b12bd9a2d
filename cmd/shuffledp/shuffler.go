package main

import (
	"log"

	"github.com/spf13/cobra"

	"github.com/shuffledp/shuffledp/cliflag"
	"github.com/shuffledp/shuffledp/deploy"
)

func init() { rootCmd.AddCommand(newShufflerCmd()) }

func newShufflerCmd() *cobra.Command {
	var p deploy.ShufflerProcess
	cmd := &cobra.Command{
		Use:   "shuffler --listen ADDR --server ADDR --state DIR --pki DIR",
		Short: "Run the shuffler role of a networked run (authenticates clients, debits the ledger, shuffles, forwards)",
		Long:  longHelp("shuffler"),
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signalContext(commandContext(cmd))
			defer stop()
			p.Stderr, p.Node.Log = cmd.ErrOrStderr(), log.New(cmd.ErrOrStderr(), "shuffler: ", 0)
			return orInterrupted(ctx, deploy.RunShuffler(ctx, p))
		},
	}
	fl := cmd.Flags()
	cliflag.MustBind(fl, &p)
	fl.StringVar(&p.Listen, "listen", "127.0.0.1:7061", "`ADDR` to listen on for clients (port 0 picks a free port)")
	fl.StringVar(&p.AddrFile, "addr-file", "", "write the address listened on to this `FILE`")
	fl.MarkHidden("addr-file")
	fl.Lookup("http").Usage += "; also the dummy reports per round and the clients connected, for the shuffler's operator only: loopback unless --expose-dummy-counts"
	return cmd
}
