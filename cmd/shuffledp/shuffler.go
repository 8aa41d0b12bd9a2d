package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"

	"github.com/shuffledp/shuffledp/dashboard"
	"github.com/shuffledp/shuffledp/deploy"
	"github.com/shuffledp/shuffledp/node"
	"github.com/shuffledp/shuffledp/statedir"
	"github.com/shuffledp/shuffledp/telemetry"
)

func init() { rootCmd.AddCommand(newShufflerCmd()) }

func newShufflerCmd() *cobra.Command {
	var f shufflerFlags
	cmd := &cobra.Command{
		Use:   "shuffler --listen ADDR --server ADDR --state DIR --pki DIR",
		Short: "Run the shuffler role of a networked run (authenticates clients, debits the ledger, shuffles, forwards)",
		Long:  longHelp("shuffler"),
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return runShuffler(cmd, &f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.listen, "listen", "127.0.0.1:7061", "`ADDR` to listen on for clients (port 0 picks a free port)")
	fl.StringVar(&f.server, "server", "", "the server's `ADDR`")
	fl.StringVar(&f.state, "state", "", "the shuffler's state `DIR` (durable ledger; its parent must exist)")
	fl.StringVar(&f.pkiDir, "pki", "", "the shuffler's bundle `DIR` (DIR/shuffler of shuffledp pki init: ca.pem, shuffler.pem, shuffler.key, clients.key)")
	fl.StringVar(&f.ledgerURL, "ledger", "", "ledger `URL`: postgres://... (default: the embedded SQLite ledger DIR/ledger.db)")
	fl.DurationVar(&f.timeout, "round-timeout", node.DefaultRoundTimeout, "the round's deadline: its batch is released this long after the round was relayed, a dummy report in the place of each sampled client that has not delivered")
	fl.BoolVar(&f.whenComplete, "release-when-complete", false, "release a round as soon as every sampled client delivered (reveals whether someone dropped out: sound only if dropout is independent of the data and equally likely for every client)")
	fl.IntVar(&f.minConnected, "min-connected", 0, "registered clients needed before the first round (0: all n); later rounds sample k of n whether or not they are connected")
	fl.DurationVar(&f.connectTimeout, "connect-timeout", node.DefaultConnectTimeout, "how long to wait for the server to answer, at start and after it went away mid-run; then exit 1 naming it")
	fl.DurationVar(&f.registerTimeout, "register-timeout", node.DefaultRegisterTimeout, "how long to wait for --min-connected clients to register before the first round (logging how many every 30s); then exit 1 saying how many did")
	fl.Float64Var(&f.delta, "delta", 1e-5, "the shuffler's delta: its ledger debits at it; a run of another delta is refused")
	fl.Float64Var(&f.target, "target-epsilon", 0, "the shuffler's target epsilon: no round is released past it; a run with a higher target (or none) is refused (0 = no target)")
	fl.StringVar(&f.adjacency, "adjacency", "replace-one", "the weakest neighbouring relation the shuffler debits Gaussian runs for: replace-one or zero-out (a server's run stated for a weaker one is refused)")
	fl.IntVar(&f.shard, "shard", 0, "this shuffler's shard, 0..S-1, with --shards S (docs/shards.md); a second shuffler of the same shard is its standby: it listens only once it holds the shard's lease")
	fl.IntVar(&f.shards, "shards", 1, "shuffler shards serving the run (the server's --shards); S > 1 needs the shared PostgreSQL --ledger")
	fl.StringVar(&f.metricsListen, "metrics-listen", "", metricsListenUsage)
	fl.StringVar(&f.addrTo, "addr-file", "", "write the address listened on to this `FILE`")
	fl.StringVar(&f.metricsAddrTo, "metrics-addr-file", "", "write the metrics address to this `FILE`")
	fl.StringVar(&f.httpListen, "http", "", httpUsage+"; also the dummy reports per round and the clients connected, for the shuffler's operator only: loopback unless --expose-dummy-counts")
	fl.StringVar(&f.httpAddrTo, "http-addr-file", "", "write the dashboard's address to this `FILE`")
	fl.BoolVar(&f.exposeDummies, "expose-dummy-counts", false, exposeUsage)
	fl.MarkHidden("addr-file")
	fl.MarkHidden("metrics-addr-file")
	fl.MarkHidden("http-addr-file")
	return cmd
}

// shufflerFlags are the flags of shuffler.
type shufflerFlags struct {
	listen, server, state, pkiDir, ledgerURL, addrTo string
	metricsListen, metricsAddrTo, adjacency          string
	httpListen, httpAddrTo                           string
	exposeDummies                                    bool
	delta, target                                    float64
	timeout, connectTimeout, registerTimeout         time.Duration
	whenComplete                                     bool
	minConnected, shard, shards                      int
}

// runShuffler runs the shuffler role until its run ends or it is stopped.
func runShuffler(cmd *cobra.Command, f *shufflerFlags) error {
	switch {
	case f.state == "":
		return errors.New("state is required: the shuffler's state directory (its durable ledger)")
	case f.pkiDir == "":
		return errors.New("pki is required: the shuffler's bundle (DIR/shuffler of `shuffledp pki init --dir DIR`)")
	case f.server == "":
		return errors.New("server is required: the server's ADDR")
	}
	// The dummy count is the shuffler operator's alone: its page and its
	// metrics stay on loopback unless the operator says otherwise.
	if err := dashboard.CheckOperatorAddr(f.metricsListen, "--metrics-listen", "--expose-dummy-counts", f.exposeDummies); err != nil {
		return err
	}
	if err := dashboard.CheckOperatorAddr(f.httpListen, "--http", "--expose-dummy-counts", f.exposeDummies); err != nil {
		return err
	}
	parent := commandContext(cmd)
	ctx, stop := signalContext(parent)
	defer stop()
	listenTLS, dialTLS, err := deploy.ShufflerTLS(f.pkiDir)
	if err != nil {
		return err
	}
	// Bind first: a refused --listen leaves no state behind. A shard's
	// shuffler binds once it holds the shard's lease (a standby waits).
	var lis net.Listener
	if f.shards <= 1 {
		if lis, err = net.Listen("tcp", f.listen); err != nil {
			return fmt.Errorf("listen %s: %w", f.listen, err)
		}
		defer lis.Close()
	}
	hln, err := deploy.ListenHTTP(f.httpListen)
	if err != nil {
		return err
	}
	var board *dashboard.ShufflerBoard
	if hln != nil {
		defer hln.Close()
		board = dashboard.NewShuffler(shufflerBoardConfig(f))
	}
	// A start refused after the state directory was created removes it.
	fresh := statedir.NewFreshPaths(f.state)
	started := false
	defer func() {
		if !started {
			fresh.Remove()
		}
	}()
	var metrics *telemetry.ShufflerMetrics
	reg := telemetry.NewRegistry()
	if f.metricsListen != "" {
		if metrics, err = telemetry.NewShufflerMetrics(reg); err != nil {
			return err
		}
	}
	proc, err := deploy.OpenShuffler(ctx, f.state, f.ledgerURL, f.pkiDir, node.ShufflerConfig{Server: f.server, ServerTLS: dialTLS, TLS: listenTLS,
		Delta: f.delta, TargetEpsilon: f.target, Adjacency: f.adjacency, Metrics: metrics, Dashboard: board,
		RoundTimeout: f.timeout, ConnectTimeout: f.connectTimeout, ReleaseWhenComplete: f.whenComplete, MinConnected: f.minConnected,
		RegisterTimeout: f.registerTimeout, Shard: f.shard, Shards: f.shards, LeaseURL: f.ledgerURL, Listen: func() (net.Listener, error) {
			l, err := net.Listen("tcp", f.listen)
			if err == nil {
				err = announceShuffler(cmd, f, l)
			}
			return l, err
		},
		Log: log.New(cmd.ErrOrStderr(), "shuffler: ", 0)})
	if err != nil {
		return err
	}
	defer proc.Close()
	started, err = serveShuffler(ctx, cmd, f, proc.Node, lis, reg, hln, board)
	return err
}

// serveShuffler serves the shuffler node and its metrics until its run
// ends or ctx is cancelled, and prints what it did; started is false when
// the start was refused (it never got the run from the server: it did not
// answer, its certificate was refused, ...).
func serveShuffler(ctx context.Context, cmd *cobra.Command, f *shufflerFlags, sh *node.Shuffler, lis net.Listener, reg *prometheus.Registry,
	hln net.Listener, board *dashboard.ShufflerBoard) (started bool, err error) {
	mctx, mstop := context.WithCancel(context.Background())
	waitMetrics, err := deploy.ServeMetrics(mctx, "shuffler", f.metricsListen, f.metricsAddrTo, reg, cmd.ErrOrStderr())
	if err != nil {
		mstop()
		return false, err
	}
	defer func() { mstop(); waitMetrics() }()
	hctx, hstop := context.WithCancel(context.Background())
	waitHTTP, err := deploy.ServeDashboard(hctx, "shuffler", hln, f.httpAddrTo, board, cmd.ErrOrStderr())
	if err != nil {
		hstop()
		return false, err
	}
	// The page sends its last state (the run's end) before it stops.
	defer func() { hstop(); waitHTTP() }()
	if lis != nil {
		if err := announceShuffler(cmd, f, lis); err != nil {
			return true, err
		}
	}
	err = sh.Run(ctx, lis)
	s := sh.Stats()
	switch {
	case err != nil:
		board.Status("failed: " + err.Error())
	case ctx.Err() != nil:
		board.Status("stopped (interrupted)")
	default:
		board.Status(fmt.Sprintf("finished: %d rounds released", s.Released))
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "shuffler: %d rounds released, %d discarded, %d reports accepted, %d forwarded (%d dummies); rejected: %v\n",
		s.Released, s.Discarded, s.Accepted, s.Forwarded, s.Dummies, s.Rejected)
	return sh.Started(), orInterrupted(ctx, err)
}

// announceShuffler writes the address the shuffler listens on (the hidden
// --addr-file) and says it.
func announceShuffler(cmd *cobra.Command, f *shufflerFlags, lis net.Listener) error {
	if err := node.WriteAddr(f.addrTo, lis.Addr().String()); err != nil {
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "shuffler: listening on %s, server %s, state %s\n", lis.Addr(), f.server, f.state)
	return nil
}

// shufflerBoardConfig is the shuffler page's own configuration (its flags);
// the run's is added when the server publishes it.
func shufflerBoardConfig(f *shufflerFlags) dashboard.Config {
	release := "at the deadline (--round-timeout " + f.timeout.String() + ")"
	if f.whenComplete {
		release = "when complete (--release-when-complete), else at " + f.timeout.String()
	}
	fields := []dashboard.Field{{Name: "server", Value: f.server}, {Name: "delta", Value: strconv.FormatFloat(f.delta, 'g', -1, 64)},
		{Name: "release", Value: release}}
	if f.target > 0 {
		fields = append(fields, dashboard.Field{Name: "target epsilon (shuffler)", Value: strconv.FormatFloat(f.target, 'g', -1, 64)})
	}
	return dashboard.Config{Fields: fields, Delta: f.delta, TargetEpsilon: f.target}
}
