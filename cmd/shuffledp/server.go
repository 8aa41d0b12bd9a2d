package main

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/spf13/cobra"

	"github.com/shuffledp/shuffledp/dashboard"
	"github.com/shuffledp/shuffledp/deploy"
	"github.com/shuffledp/shuffledp/metrics"
	"github.com/shuffledp/shuffledp/node"
	"github.com/shuffledp/shuffledp/statedir"
	"github.com/shuffledp/shuffledp/telemetry"
	"github.com/shuffledp/shuffledp/training"
)

func init() { rootCmd.AddCommand(newServerCmd()) }

// nodeFlags are the flags a role command adds beside the train flags; they
// are not part of the run's identity in its state directory.
var nodeFlags = []string{"listen", "pki", "addr-file", "metrics-listen", "metrics-addr-file", "batch-timeout", "http", "http-addr-file"}

func newServerCmd() *cobra.Command {
	var (
		f                      trainFlags
		listen, pkiDir, addrTo string
		metricsListen, mAddrTo string
		batchTimeout           time.Duration
		httpListen, hAddrTo    string
		shards                 int
	)
	cmd := &cobra.Command{
		Use:   "server --listen ADDR --state DIR --pki DIR [train flags]",
		Short: "Run the server role of a networked run (model, optimizer, evaluation, metrics; opens reports)",
		Long:  longHelp("server"),
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServer(cmd, &f, listen, pkiDir, addrTo, metricsListen, mAddrTo, batchTimeout, httpListen, hAddrTo, shards)
		},
	}
	addTrainFlags(cmd.Flags(), &f)
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:7060", "`ADDR` to listen on (host:port; port 0 picks a free port)")
	cmd.Flags().StringVar(&pkiDir, "pki", "", "the server's bundle `DIR` (DIR/server of shuffledp pki init: ca.pem, server.pem, server.key)")
	cmd.Flags().StringVar(&addrTo, "addr-file", "", "write the address listened on to this `FILE` (for --listen with port 0)")
	cmd.Flags().StringVar(&metricsListen, "metrics-listen", "", metricsListenUsage)
	cmd.Flags().StringVar(&mAddrTo, "metrics-addr-file", "", "write the metrics address to this `FILE`")
	cmd.Flags().DurationVar(&batchTimeout, "batch-timeout", node.DefaultBatchTimeout, "how long to wait for the shuffler's next batch after publishing a model; then exit 1 naming the model version (the state is kept: the same command resumes)")
	cmd.Flags().StringVar(&httpListen, "http", "", httpUsage)
	cmd.Flags().StringVar(&hAddrTo, "http-addr-file", "", "write the dashboard's address to this `FILE`")
	cmd.Flags().IntVar(&shards, "shards", 1, "shuffler shards serving the run (docs/shards.md), each shard's shuffler started with --shard I --shards S; S must divide --clients and --sample")
	cmd.Flags().MarkHidden("addr-file")
	cmd.Flags().MarkHidden("metrics-addr-file")
	cmd.Flags().MarkHidden("http-addr-file")
	return cmd
}

func runServer(cmd *cobra.Command, f *trainFlags, listen, pkiDir, addrTo, metricsListen, mAddrTo string, batchTimeout time.Duration, httpListen, hAddrTo string, shards int) error {
	sc, err := serverConfig(cmd, f, pkiDir)
	if err != nil {
		return err
	}
	sc.Node.Shards = shards
	if sc.Node.BatchTimeout = batchTimeout; batchTimeout < 0 {
		return fmt.Errorf("batch-timeout must be >= 0, got %v", batchTimeout)
	}
	// Bind first: a refused --listen leaves no state behind.
	lis, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("listen %s: %w", listen, err)
	}
	defer lis.Close()
	hln, err := deploy.ListenHTTP(httpListen)
	if err != nil {
		return err
	}
	if hln != nil {
		defer hln.Close()
		sc.Node.Dashboard = dashboard.NewServer(dashboard.Config{})
	}
	// A start refused after the state directory (or the metrics file) was
	// created removes what it created.
	fresh := statedir.NewFreshPaths(f.state, f.metrics)
	started := false
	defer func() {
		if !started {
			fresh.Remove()
		}
	}()
	reg := telemetry.NewRegistry()
	if metricsListen != "" {
		if sc.Node.Metrics, err = telemetry.NewServerMetrics(reg); err != nil {
			return err
		}
	}
	role, err := deploy.OpenServer(commandContext(cmd), sc)
	if err != nil {
		return err
	}
	defer role.Close() // before fresh.Remove: the lock is released first
	started = true
	if cfg := role.Trainer.Config(); role.Finished() {
		// Nothing to serve: say so and exit at once (up then starts
		// neither the shuffler nor the clients).
		fmt.Fprintf(cmd.OutOrStdout(), "run %s already finished: %d of %d rounds done (state in %s); nothing to do\n",
			role.Session.Run(), role.Done, cfg.TotalRounds(), role.Session.Dir())
		return nil
	}
	if err := node.WriteAddr(addrTo, lis.Addr().String()); err != nil {
		return err
	}
	go role.Node.Serve(lis)
	mctx, mstop := context.WithCancel(context.Background())
	waitMetrics, err := deploy.ServeMetrics(mctx, "server", metricsListen, mAddrTo, reg, cmd.ErrOrStderr())
	if err != nil {
		mstop()
		return err
	}
	defer func() { mstop(); waitMetrics() }()
	hctx, hstop := context.WithCancel(context.Background())
	waitHTTP, err := deploy.ServeDashboard(hctx, "server", hln, hAddrTo, role.Board, cmd.ErrOrStderr())
	if err != nil {
		hstop()
		return err
	}
	// The page sends its last state (the run's end) before it stops.
	defer func() { hstop(); waitHTTP() }()
	return serveServer(cmd, role, lis.Addr())
}

// serverConfig checks the server's own flags and returns the server
// process's configuration.
func serverConfig(cmd *cobra.Command, f *trainFlags, pkiDir string) (deploy.ServerConfig, error) {
	if err := deploy.CheckServerOptions(f.state, pkiDir, f.Options); err != nil {
		return deploy.ServerConfig{}, err
	}
	cfg, err := trainConfig(cmd, f)
	if err != nil {
		return deploy.ServerConfig{}, err
	}
	ncfg, err := deploy.ServerNode(cfg, f.Options, pkiDir)
	if err != nil {
		return deploy.ServerConfig{}, err
	}
	flags := trainRunFlags(cmd, cfg)
	for _, n := range nodeFlags {
		delete(flags, n)
	}
	return deploy.ServerConfig{Options: f.Options, Train: cfg, State: f.state, Metrics: f.metrics, Flags: flags, Node: ncfg}, nil
}

// serveServer runs the loop until it stops, printing every evaluation and
// the end; an interrupted run exits 130 with its state saved.
func serveServer(cmd *cobra.Command, r *deploy.Server, addr net.Addr) error {
	cfg, stderr := r.Trainer.Config(), cmd.ErrOrStderr()
	total := cfg.TotalRounds()
	fmt.Fprintf(stderr, "server: run %s in %s, listening on %s; %s on %d clients, k=%d, %s eps0 %g, %d rounds (resuming at %d); delta %g\n",
		r.Session.Run(), r.Session.Dir(), addr, r.Trainer.Model().Name(), cfg.Clients, cfg.Sample, cfg.Randomizer, cfg.Eps0, total, r.Done, cfg.Delta)
	ctx, stop := signalContext(commandContext(cmd))
	defer stop()
	var last metrics.Record
	reason, err := r.Run(ctx, training.Hooks{OnEval: func(rec metrics.Record) error {
		last = rec
		fmt.Fprintf(stderr, "server: round %d/%d epoch %.4g acc %s eps %s (%d ledger rounds)\n", rec.Round, total, rec.Epoch,
			fmtPtr(rec.TestAccuracy, "%.4f"), fmtPtr(rec.Epsilon, "%.4g"), derefInt(rec.LedgerRounds))
		return nil
	}})
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "stopped (%s) after round %d (epoch %.4g): test accuracy %s, epsilon %s at delta %g\n",
		reason, last.Round, last.Epoch, fmtPtr(last.TestAccuracy, "%.4f"), fmtPtr(last.Epsilon, "%.4g"), cfg.Delta)
	if reason == training.StopCancelled {
		fmt.Fprintf(stderr, "server: state saved in %s; run the same command again to resume\n", r.Session.Dir())
		return errInterrupted
	}
	return nil
}

func derefInt(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}
