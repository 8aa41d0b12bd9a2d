package main

import (
	"log"

	"github.com/spf13/cobra"

	"github.com/shuffledp/shuffledp/deploy"
	"github.com/shuffledp/shuffledp/node"
	"github.com/shuffledp/shuffledp/shard"
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
	fl.StringVar(&p.Listen, "listen", "127.0.0.1:7061", "`ADDR` to listen on for clients (port 0 picks a free port)")
	fl.StringVar(&p.Node.Server, "server", "", "the server's `ADDR`")
	fl.StringVar(&p.State, "state", "", "the shuffler's state `DIR` (durable ledger; its parent must exist)")
	fl.StringVar(&p.PKI, "pki", "", "the shuffler's bundle `DIR` (DIR/shuffler of shuffledp pki init: ca.pem, shuffler.pem, shuffler.key, clients.key)")
	fl.StringVar(&p.Ledger, "ledger", "", "ledger `URL`: postgres://... (default: the embedded SQLite ledger DIR/ledger.db)")
	fl.DurationVar(&p.Node.RoundTimeout, "round-timeout", node.DefaultRoundTimeout, "the round's deadline: its batch is released this long after the round was relayed, a dummy report in the place of each sampled client that has not delivered")
	fl.BoolVar(&p.Node.ReleaseWhenComplete, "release-when-complete", false, "release a round as soon as every sampled client delivered (reveals whether someone dropped out: sound only if dropout is independent of the data and equally likely for every client)")
	fl.IntVar(&p.Node.MinConnected, "min-connected", 0, "registered clients needed before the first round (0: all n); later rounds sample k of n whether or not they are connected")
	fl.DurationVar(&p.Node.ConnectTimeout, "connect-timeout", node.DefaultConnectTimeout, "how long to wait for the server to answer, at start and after it went away mid-run; then exit 1 naming it")
	fl.DurationVar(&p.Node.RegisterTimeout, "register-timeout", node.DefaultRegisterTimeout, "how long to wait for --min-connected clients to register before the first round (logging how many every 30s); then exit 1 saying how many did")
	fl.DurationVar(&p.Node.ModelTimeout, "model-timeout", node.DefaultModelTimeout, "how long to wait for the server's next model (it steps and evaluates first); then exit 1 naming the server")
	fl.Float64Var(&p.Node.Delta, "delta", 1e-5, "the shuffler's delta: its ledger debits at it; a run of another delta is refused")
	fl.Float64Var(&p.Node.TargetEpsilon, "target-epsilon", 0, "the shuffler's target epsilon: no round is released past it; a run with a higher target (or none) is refused (0 = no target)")
	fl.StringVar(&p.Node.Adjacency, "adjacency", "replace-one", "the weakest neighbouring relation the shuffler debits Gaussian runs for: replace-one or zero-out (a server's run stated for a weaker one is refused)")
	fl.IntVar(&p.Node.Shard, "shard", 0, "this shuffler's shard, 0..S-1, with --shards S (docs/shards.md); a second shuffler of the same shard is its standby: it listens only once it holds the shard's lease")
	fl.IntVar(&p.Node.Shards, "shards", 1, "shuffler shards serving the run (the server's --shards); S > 1 needs the shared PostgreSQL --ledger")
	fl.DurationVar(&p.Node.LeaseTTL, "lease-ttl", shard.DefaultLeaseTTL, "with --shards: how long a paused shuffler keeps its shard's lease (its heartbeat renews it while it runs; PostgreSQL 14+)")
	fl.StringVar(&p.MetricsListen, "metrics-listen", "", metricsListenUsage)
	fl.StringVar(&p.AddrFile, "addr-file", "", "write the address listened on to this `FILE`")
	fl.StringVar(&p.MetricsAddrFile, "metrics-addr-file", "", "write the metrics address to this `FILE`")
	fl.StringVar(&p.HTTPListen, "http", "", httpUsage+"; also the dummy reports per round and the clients connected, for the shuffler's operator only: loopback unless --expose-dummy-counts")
	fl.StringVar(&p.HTTPAddrFile, "http-addr-file", "", "write the dashboard's address to this `FILE`")
	fl.BoolVar(&p.ExposeDummies, "expose-dummy-counts", false, exposeUsage)
	fl.MarkHidden("addr-file")
	fl.MarkHidden("metrics-addr-file")
	fl.MarkHidden("http-addr-file")
	return cmd
}
