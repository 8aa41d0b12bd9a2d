package deploy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/shuffledp/shuffledp/dashboard"
	"github.com/shuffledp/shuffledp/metrics"
	"github.com/shuffledp/shuffledp/node"
	"github.com/shuffledp/shuffledp/statedir"
	"github.com/shuffledp/shuffledp/telemetry"
	"github.com/shuffledp/shuffledp/training"
)

// Endpoints are where a role process listens (--listen, --metrics-listen,
// --http; the last two "" for off) and the files it writes each bound
// address to for a parent process (--addr-file, ...; "" for none).
type Endpoints struct {
	Listen, AddrFile string
	MetricsListen    string `flag:"metrics-listen" metavar:"ADDR" usage:"serve Prometheus metrics at http://ADDR/metrics (e.g. 127.0.0.1:9090; empty: off). Counts, sizes, latencies and the ledger's epsilon only: no client identity, no report"`
	MetricsAddrFile  string `flag:"metrics-addr-file,hidden" metavar:"FILE" usage:"write the metrics address to this FILE"`
	HTTPListen       string `flag:"http" metavar:"ADDR" usage:"serve a live page of this role's run at http://ADDR/ (e.g. 127.0.0.1:8080; empty: off): configuration, rounds, the ledger's epsilon, accuracy, round times, errors"`
	HTTPAddrFile     string `flag:"http-addr-file,hidden" metavar:"FILE" usage:"write the dashboard's address to this FILE"`
}

// listeners binds the role's address (unless later: then lis is nil)
// and its page's, so that a refused address stops the start before any
// state is created; close releases both.
func (e Endpoints) listeners(later bool) (lis, page net.Listener, close func(), err error) {
	if !later {
		if lis, err = net.Listen("tcp", e.Listen); err != nil {
			return nil, nil, nil, fmt.Errorf("listen %s: %w", e.Listen, err)
		}
	}
	if page, err = ListenHTTP(e.HTTPListen); err != nil {
		if lis != nil {
			lis.Close()
		}
		return nil, nil, nil, err
	}
	return lis, page, func() {
		if lis != nil {
			lis.Close()
		}
		if page != nil {
			page.Close()
		}
	}, nil
}

// serve serves the role's metrics (reg) and page until the returned stop
// is called, which waits for both to end (the page sends its last state
// first).
func (e Endpoints) serve(role string, reg *prometheus.Registry, page net.Listener, board dashboard.Page, w io.Writer) (stop func(), err error) {
	mctx, mstop := context.WithCancel(context.Background())
	waitMetrics, err := ServeMetrics(mctx, role, e.MetricsListen, e.MetricsAddrFile, reg, w)
	if err != nil {
		mstop()
		return nil, err
	}
	hctx, hstop := context.WithCancel(context.Background())
	waitHTTP, err := ServeDashboard(hctx, role, page, e.HTTPAddrFile, board, w)
	if err != nil {
		hstop()
		mstop()
		waitMetrics()
		return nil, err
	}
	return func() { hstop(); waitHTTP(); mstop(); waitMetrics() }, nil
}

// ShufflerProcess configures RunShuffler: the shuffler process of a
// networked run as `shuffledp shuffler` runs it.
type ShufflerProcess struct {
	Endpoints
	// State is the state directory, Ledger the ledger's URL ("": the
	// SQLite ledger in State), PKI the shuffler's bundle.
	State  string `flag:"state" metavar:"DIR" usage:"the shuffler's state DIR (durable ledger; its parent must exist)"`
	Ledger string `flag:"ledger" metavar:"URL" usage:"ledger URL: postgres://... (default: the embedded SQLite ledger DIR/ledger.db)"`
	PKI    string `flag:"pki" metavar:"DIR" usage:"the shuffler's bundle DIR (DIR/shuffler of shuffledp pki init: ca.pem, shuffler.pem, shuffler.key, clients.key)"`
	// ExposeDummies lets the metrics and the page listen beyond loopback
	// (the dummy count is the shuffler operator's alone).
	ExposeDummies bool `flag:"expose-dummy-counts" usage:"allow --http and --metrics-listen beyond loopback: both show the dummy reports per round, which only the shuffler's operator may see (a published dummy count breaks privacy; docs/proofs/dummy-reports.md)"`
	// Node is the node's configuration; RunShuffler sets its TLS, store,
	// enroller, metrics and page.
	Node node.ShufflerConfig
	// Stderr hears the process's own lines (addresses, the end's counts).
	Stderr io.Writer
}

// RunShuffler checks p, binds its addresses, loads its credentials, opens
// its state directory and ledger and runs the shuffler node (with its
// metrics and page) until its run ends or ctx is cancelled; then it prints
// what it did. A start refused before the node got the run from the
// server (it did not answer, its certificate was refused, ...) removes the
// state directory it created. Errors name the flags.
func RunShuffler(ctx context.Context, p ShufflerProcess) error {
	switch {
	case p.State == "":
		return errors.New("state is required: the shuffler's state directory (its durable ledger)")
	case p.PKI == "":
		return errors.New("pki is required: the shuffler's bundle (DIR/shuffler of `shuffledp pki init --dir DIR`)")
	case p.Node.Server == "":
		return errors.New("server is required: the server's ADDR")
	}
	// The dummy count is the shuffler operator's alone: its page and its
	// metrics stay on loopback unless the operator says otherwise.
	if err := dashboard.CheckOperatorAddr(p.MetricsListen, "--metrics-listen", "--expose-dummy-counts", p.ExposeDummies); err != nil {
		return err
	}
	if err := dashboard.CheckOperatorAddr(p.HTTPListen, "--http", "--expose-dummy-counts", p.ExposeDummies); err != nil {
		return err
	}
	var err error
	if p.Node.TLS, p.Node.ServerTLS, err = ShufflerTLS(p.PKI); err != nil {
		return err
	}
	// A shard's shuffler binds once it holds the shard's lease (a standby
	// waits).
	lis, page, closeListeners, err := p.listeners(p.Node.Shards > 1)
	if err != nil {
		return err
	}
	defer closeListeners()
	if page != nil {
		p.Node.Dashboard = dashboard.NewShuffler(ShufflerBoardConfig(p.Node))
	}
	// A start refused after the state directory was created removes it.
	fresh := statedir.NewFreshPaths(p.State)
	started := false
	defer func() {
		if !started {
			fresh.Remove()
		}
	}()
	reg := telemetry.NewRegistry()
	if p.MetricsListen != "" {
		if p.Node.Metrics, err = telemetry.NewShufflerMetrics(reg); err != nil {
			return err
		}
	}
	p.Node.LeaseURL = p.Ledger
	p.Node.Listen = func() (net.Listener, error) {
		l, err := net.Listen("tcp", p.Listen)
		if err == nil {
			err = p.announce(l)
		}
		return l, err
	}
	proc, err := OpenShuffler(ctx, p.State, p.Ledger, p.PKI, p.Node)
	if err != nil {
		return err
	}
	defer proc.Close()
	started, err = p.serve(ctx, proc.Node, lis, reg, page)
	return err
}

// serve serves the shuffler node, its metrics and its page until its run
// ends or ctx is cancelled, and prints what it did; started is false when
// the start was refused.
func (p ShufflerProcess) serve(ctx context.Context, sh *node.Shuffler, lis net.Listener, reg *prometheus.Registry, page net.Listener) (started bool, err error) {
	board := p.Node.Dashboard
	stop, err := p.Endpoints.serve("shuffler", reg, page, board, p.Stderr)
	if err != nil {
		return false, err
	}
	defer stop()
	if lis != nil {
		if err := p.announce(lis); err != nil {
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
	fmt.Fprintf(p.Stderr, "shuffler: %d rounds released, %d discarded, %d reports accepted, %d forwarded (%d dummies); rejected: %v\n",
		s.Released, s.Discarded, s.Accepted, s.Forwarded, s.Dummies, s.Rejected)
	return sh.Started(), err
}

// announce writes the address the shuffler listens on (AddrFile) and
// says it.
func (p ShufflerProcess) announce(lis net.Listener) error {
	if err := node.WriteAddr(p.AddrFile, lis.Addr().String()); err != nil {
		return err
	}
	fmt.Fprintf(p.Stderr, "shuffler: listening on %s, server %s, state %s\n", lis.Addr(), p.Node.Server, p.State)
	return nil
}

// ShufflerBoardConfig is the shuffler page's own configuration (the
// shuffler's settings); the run's is added when the server publishes it.
func ShufflerBoardConfig(c node.ShufflerConfig) dashboard.Config {
	release := "at the deadline (--round-timeout " + c.RoundTimeout.String() + ")"
	if c.ReleaseWhenComplete {
		release = "when complete (--release-when-complete), else at " + c.RoundTimeout.String()
	}
	fields := []dashboard.Field{{Name: "server", Value: c.Server}, {Name: "delta", Value: strconv.FormatFloat(c.Delta, 'g', -1, 64)},
		{Name: "release", Value: release}}
	if c.TargetEpsilon > 0 {
		fields = append(fields, dashboard.Field{Name: "target epsilon (shuffler)", Value: strconv.FormatFloat(c.TargetEpsilon, 'g', -1, 64)})
	}
	return dashboard.Config{Fields: fields, Delta: c.Delta, TargetEpsilon: c.TargetEpsilon}
}

// ServerProcess configures RunServer: the server process of a networked
// run as `shuffledp server` runs it.
type ServerProcess struct {
	Endpoints
	// Config is the server's configuration (CheckServerOptions, ServerNode);
	// RunServer sets its node's batch timeout, metrics and page.
	Config       ServerConfig  `flag:"-"` // its train flags are bound by the command
	BatchTimeout time.Duration `flag:"batch-timeout" default:"30m" usage:"how long to wait for the shuffler's next batch after publishing a model; then exit 1 naming the model version (the state is kept: the same command resumes)"`
	// Shards is the number of shuffler shards serving the run (the
	// node's Shards).
	Shards int `flag:"shards" default:"1" usage:"shuffler shards serving the run (docs/shards.md), each shard's shuffler started with --shard I --shards S; S must divide --clients and --sample"`
	// Stdout hears that a finished run has nothing to do; Stderr the
	// process's own lines (addresses, the run it serves).
	Stdout, Stderr io.Writer
	// Hooks hear every round and evaluation of the loop.
	Hooks training.Hooks
}

// RunServer binds p's addresses, opens the server process (OpenServer)
// and, unless its checkpoint has completed every round (then it says so
// on Stdout and returns "" at once), serves the node, its metrics and its
// page and runs the loop until it stops (Server.Run); it returns why,
// with the loop's last evaluation and the state directory. A start refused after the state
// directory (or the metrics file) was created removes what it created.
func RunServer(ctx context.Context, p ServerProcess) (ServerOutcome, error) {
	var out ServerOutcome
	p.Config.Node.Shards = p.Shards
	if p.Config.Node.BatchTimeout = p.BatchTimeout; p.BatchTimeout < 0 {
		return out, fmt.Errorf("batch-timeout must be >= 0, got %v", p.BatchTimeout)
	}
	lis, page, closeListeners, err := p.listeners(false)
	if err != nil {
		return out, err
	}
	defer closeListeners()
	if page != nil {
		p.Config.Node.Dashboard = dashboard.NewServer(dashboard.Config{})
	}
	fresh := statedir.NewFreshPaths(p.Config.State, p.Config.Metrics)
	started := false
	defer func() {
		if !started {
			fresh.Remove()
		}
	}()
	reg := telemetry.NewRegistry()
	if p.MetricsListen != "" {
		if p.Config.Node.Metrics, err = telemetry.NewServerMetrics(reg); err != nil {
			return out, err
		}
	}
	s, err := OpenServer(ctx, p.Config)
	if err != nil {
		return out, err
	}
	defer s.Close() // before fresh.Remove: the lock is released first
	started = true
	out.Dir = s.Session.Dir()
	if cfg := s.Trainer.Config(); s.Finished() {
		// Nothing to serve: say so and exit at once (up then starts
		// neither the shuffler nor the clients).
		fmt.Fprintf(p.Stdout, "run %s already finished: %d of %d rounds done (state in %s); nothing to do\n",
			s.Session.Run(), s.Done, cfg.TotalRounds(), s.Session.Dir())
		return out, nil
	}
	if err := node.WriteAddr(p.AddrFile, lis.Addr().String()); err != nil {
		return out, err
	}
	go s.Node.Serve(lis)
	stop, err := p.Endpoints.serve("server", reg, page, s.Board, p.Stderr)
	if err != nil {
		return out, err
	}
	defer stop()
	cfg := s.Trainer.Config()
	fmt.Fprintf(p.Stderr, "server: run %s in %s, listening on %s; %s on %d clients, k=%d, %s eps0 %g, %d rounds (resuming at %d); delta %g\n",
		s.Session.Run(), s.Session.Dir(), lis.Addr(), s.Trainer.Model().Name(), cfg.Clients, cfg.Sample, cfg.Randomizer, cfg.Eps0, cfg.TotalRounds(), s.Done, cfg.Delta)
	hooks := p.Hooks
	onEval := hooks.OnEval
	hooks.OnEval = func(r metrics.Record) error {
		out.Last = r
		if onEval != nil {
			return onEval(r)
		}
		return nil
	}
	out.Reason, err = s.Run(ctx, hooks)
	return out, err
}

// ServerOutcome is how RunServer ended: why the loop stopped ("" when the
// run had finished before), its last evaluation and the state directory.
type ServerOutcome struct {
	Reason training.StopReason
	Last   metrics.Record
	Dir    string
}

// WriteEnd writes why and where the run stopped, its last evaluation's
// test accuracy and epsilon at delta, as `shuffledp server` prints it at
// the end.
func (o ServerOutcome) WriteEnd(w io.Writer, delta float64) error {
	unit := ""
	if o.Last.Neighbouring == training.NeighbouringClient {
		unit = " (" + training.ClientLevelNote + ")"
	}
	eps := metrics.FormatUpper(o.Last.Epsilon, 4)
	if l := o.Last.Label(); l != "" && o.Last.Epsilon != nil {
		eps += " by " + l
	}
	_, err := fmt.Fprintf(w, "stopped (%s) after round %d (epoch %.4g): test accuracy %s, epsilon %s at delta %g%s\n",
		o.Reason, o.Last.Round, o.Last.Epoch, metrics.Format(o.Last.TestAccuracy, "%.4f"), eps, delta, unit)
	return err
}

// PrintEvaluations returns a hook (training.Hooks.OnEval) that prints
// every evaluation of a run of total rounds on w as `shuffledp server`
// does: round, epoch, accuracy, epsilon and the rounds its ledger has
// debited.
func PrintEvaluations(w io.Writer, total int) func(metrics.Record) error {
	return func(r metrics.Record) error {
		var ledgerRounds int64
		if r.LedgerRounds != nil {
			ledgerRounds = *r.LedgerRounds
		}
		_, err := fmt.Fprintf(w, "server: round %d/%d %s (%d ledger rounds)\n", r.Round, total, r.Progress(), ledgerRounds)
		return err
	}
}
