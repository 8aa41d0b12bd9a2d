package main

import (
	"log"

	"github.com/spf13/cobra"

	"github.com/shuffledp/shuffledp/deploy"
	"github.com/shuffledp/shuffledp/node"
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
	fl := cmd.Flags()
	fl.StringVar(&p.Pool.Shuffler, "shuffler", "", "the shuffler's `ADDR`")
	fl.StringVar(&p.Pool.Server, "server", "", "the server's `ADDR` (for the run specification and key configs)")
	fl.StringVar(&p.Clients, "clients", "", "the clients `LO:HI` this process hosts (client i holds training example i)")
	fl.StringVar(&p.Pool.DataDir, "data-dir", "", "`DIR` holding the run's data set (mnist); not needed for synthetic")
	fl.StringVar(&p.PKI, "pki", "", "the client bundle `DIR` (DIR/client of shuffledp pki init: ca.pem, client.pem, client.key)")
	fl.StringVar(&p.Credentials, "credentials", "", "the clients' credentials `FILE` (shuffledp pki enrol)")
	fl.IntVar(&p.Pool.Workers, "workers", 1, "goroutines computing reports")
	fl.DurationVar(&p.Pool.ConnectTimeout, "connect-timeout", node.DefaultConnectTimeout, "how long to wait for the server and the shuffler to answer (and to accept the registration), at start and after the shuffler went away mid-run; then exit 1 naming what was waited for")
	fl.StringVar(&p.MetricsListen, "metrics-listen", "", "serve this process's health (Go runtime and process metrics only: no per-round figure, since how often a pool's clients are sampled is who was sampled) at http://`ADDR`/metrics (empty: off)")
	fl.StringVar(&p.MetricsAddrFile, "metrics-addr-file", "", "write the metrics address to this `FILE`")
	fl.MarkHidden("metrics-addr-file")
	fl.Float64Var(&p.Pool.Dropout, "dropout", 0, "SIMULATION of unreliable devices: each sampled client ignores a round with probability `P` (coins from crypto/rand); the shuffler puts a dummy in its place at the deadline")
	return cmd
}
