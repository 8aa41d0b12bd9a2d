package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/shuffledp/shuffledp/data"
	"github.com/shuffledp/shuffledp/metrics"
	"github.com/shuffledp/shuffledp/model"
	"github.com/shuffledp/shuffledp/node"
	"github.com/shuffledp/shuffledp/pki"
	"github.com/shuffledp/shuffledp/statedir"
	"github.com/shuffledp/shuffledp/telemetry"
	"github.com/shuffledp/shuffledp/training"
)

func init() { rootCmd.AddCommand(newServerCmd()) }

// nodeFlags are the flags a role command adds beside the train flags; they
// are not part of the run's identity in its state directory.
var nodeFlags = []string{"listen", "pki", "addr-file", "metrics-listen", "metrics-addr-file"}

func newServerCmd() *cobra.Command {
	var (
		f                      trainFlags
		listen, pkiDir, addrTo string
		metricsListen, mAddrTo string
	)
	cmd := &cobra.Command{
		Use:   "server --listen ADDR --state DIR --pki DIR [train flags]",
		Short: "Run the server role of a networked run (model, optimizer, evaluation, metrics; opens reports)",
		Long: `server runs the untrusted server of the shuffle model as its own process: it
holds the model (the train flags describe the run, as for train), publishes it
to the shuffler, receives the shuffled batches the shuffler released after
debiting its ledger, opens the reports with its HPKE private key (generated in
--state on first start), decodes, averages and steps; evaluation, metrics
(DIR/metrics.jsonl) and checkpoints are those of train --state. It never sees a
client identity: clients reach it only to read the public run specification.

TLS: --pki DIR is the server's bundle (DIR/server of shuffledp pki init:
ca.pem, server.pem, server.key; a bundle holding another role's secret is
refused). Only a peer presenting the shuffler's certificate may pull the
model, submit batches or stop the run; clients (the client certificate) may
read the public run specification only; any other peer fails the TLS
handshake.

--metrics-listen ADDR serves Prometheus metrics (rounds, batches and reports
refused by reason, batch sizes, round latency, test accuracy) at
http://ADDR/metrics.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServer(cmd, &f, listen, pkiDir, addrTo, metricsListen, mAddrTo)
		},
	}
	addTrainFlags(cmd.Flags(), &f)
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:7060", "`ADDR` to listen on (host:port; port 0 picks a free port)")
	cmd.Flags().StringVar(&pkiDir, "pki", "", "the server's bundle `DIR` (DIR/server of shuffledp pki init: ca.pem, server.pem, server.key)")
	cmd.Flags().StringVar(&addrTo, "addr-file", "", "write the address listened on to this `FILE` (for --listen with port 0)")
	cmd.Flags().StringVar(&metricsListen, "metrics-listen", "", metricsListenUsage)
	cmd.Flags().StringVar(&mAddrTo, "metrics-addr-file", "", "write the metrics address to this `FILE`")
	cmd.Flags().MarkHidden("addr-file")
	cmd.Flags().MarkHidden("metrics-addr-file")
	return cmd
}

func runServer(cmd *cobra.Command, f *trainFlags, listen, pkiDir, addrTo, metricsListen, mAddrTo string) error {
	if f.state == "" {
		return errors.New("state is required: the server's state directory (model checkpoint, metrics, HPKE key)")
	}
	if pkiDir == "" {
		return errors.New("pki is required: the server's bundle (DIR/server of `shuffledp pki init --dir DIR`)")
	}
	if f.validation != 0 {
		return errors.New("validation: a networked server holds no training data to hold out")
	}
	if f.cryptoNoise {
		return errors.New("crypto-noise: clients of a networked run always draw their noise from crypto/rand")
	}
	cfg, err := trainConfig(cmd, f)
	if err != nil {
		return err
	}
	if err := cfg.CheckNetworked(); err != nil {
		return err
	}
	dataset := node.Dataset{Name: f.dataset, Seed: f.seed}
	if err := dataset.Validate(); err != nil {
		return err
	}
	tlsConf, err := pki.ServerTLS(pkiDir, pki.RoleServer)
	if err != nil {
		return err
	}
	if err := node.CheckOwnCertificates("server", tlsConf, time.Now()); err != nil {
		return err
	}
	flags := trainRunFlags(cmd, cfg)
	for _, n := range nodeFlags {
		delete(flags, n)
	}
	// Bind first: a refused --listen leaves no state behind.
	lis, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("listen %s: %w", listen, err)
	}
	defer lis.Close()
	// A start refused after the state directory (or the metrics file) was
	// created removes what it created.
	fresh := newFreshPaths(f.state, f.metrics)
	started := false
	defer func() {
		if !started {
			fresh.remove()
		}
	}()
	parent := commandContext(cmd)
	var serverMetrics *telemetry.ServerMetrics
	reg := telemetry.NewRegistry()
	if metricsListen != "" {
		if serverMetrics, err = telemetry.NewServerMetrics(reg); err != nil {
			return err
		}
	}
	session, err := training.OpenSession(parent, statedir.SessionConfig{Dir: f.state, Flags: flags, MayDiffer: trainMayDiffer, Metrics: f.metrics}, &cfg)
	if err != nil {
		return err
	}
	defer session.Close() // before fresh.remove: the lock is released first
	srv, err := node.NewServer(node.ServerConfig{Dir: session.Dir(), Dataset: dataset, Delta: cfg.Delta, TargetEpsilon: cfg.TargetEpsilon,
		TLS: tlsConf, Metrics: serverMetrics})
	if err != nil {
		return err
	}
	defer srv.Close() // before the session closes
	_, test, err := loadTrainData(f)
	if err != nil {
		return err
	}
	m, err := model.New(f.model, test.Dim, test.Classes)
	if err != nil {
		return err
	}
	m.Init(model.NewInitRNG(f.seed))
	tr, done, err := attachServerLoop(session, srv, cfg, m, test)
	if err != nil {
		return err
	}
	started = true
	cfg = tr.Config()
	total := cfg.TotalRounds()
	if done >= total {
		// Nothing to serve: say so and exit at once (up then starts
		// neither the shuffler nor the clients).
		fmt.Fprintf(cmd.OutOrStdout(), "run %s already finished: %d of %d rounds done (state in %s); nothing to do\n",
			session.Run(), done, total, session.Dir())
		return nil
	}
	if err := node.WriteAddr(addrTo, lis.Addr().String()); err != nil {
		return err
	}
	go srv.Serve(lis)
	stderr := cmd.ErrOrStderr()
	mctx, mstop := context.WithCancel(context.Background())
	waitMetrics, err := serveMetrics(mctx, "server", metricsListen, mAddrTo, reg, stderr)
	if err != nil {
		mstop()
		return err
	}
	defer func() { mstop(); waitMetrics() }()
	fmt.Fprintf(stderr, "server: run %s in %s, listening on %s; %s on %d clients, k=%d, %s eps0 %g, %d rounds (resuming at %d); delta %g\n",
		session.Run(), session.Dir(), lis.Addr(), m.Name(), cfg.Clients, cfg.Sample, cfg.Randomizer, cfg.Eps0, total, done, cfg.Delta)

	ctx, stop := signalContext(parent)
	defer stop()
	var last metrics.Record
	reason, err := trainServerLoop(ctx, tr, session, srv, training.Hooks{OnEval: func(r metrics.Record) error {
		last = r
		fmt.Fprintf(stderr, "server: round %d/%d epoch %.4g acc %s eps %s (%d ledger rounds)\n", r.Round, total, r.Epoch,
			fmtPtr(r.TestAccuracy, "%.4f"), fmtPtr(r.Epsilon, "%.4g"), derefInt(r.LedgerRounds))
		return nil
	}})
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "stopped (%s) after round %d (epoch %.4g): test accuracy %s, epsilon %s at delta %g\n",
		reason, last.Round, last.Epoch, fmtPtr(last.TestAccuracy, "%.4f"), fmtPtr(last.Epsilon, "%.4g"), cfg.Delta)
	if reason == training.StopCancelled {
		fmt.Fprintf(stderr, "server: state saved in %s; run the same command again to resume\n", session.Dir())
		return errInterrupted
	}
	return nil
}

// attachServerLoop builds the server process's training loop: a trainer
// whose rounds come from the node (training.WithRemote: the node is its
// transport), its reports opened with the node's HPKE key, bound to the
// session and restored from its checkpoint; the node then publishes the
// run's configuration. It returns the rounds the checkpoint had completed.
func attachServerLoop(session *statedir.Session, srv *node.Server, cfg training.Config, m model.Model, test *data.Dataset) (*training.Trainer, int, error) {
	rsize, err := cfg.ReportSize(m.NumParams())
	if err != nil {
		return nil, 0, err
	}
	sealer, opener, err := srv.Sealing(rsize)
	if err != nil {
		return nil, 0, err
	}
	tr, err := training.New(cfg, m, nil, test, append(training.SessionOptions(session), training.WithRemote(srv), training.WithSealing(sealer, opener))...)
	if err != nil {
		return nil, 0, err
	}
	done, err := tr.Resume(session)
	if err != nil {
		return nil, 0, err
	}
	return tr, done, srv.Publish(tr.RunConfig())
}

// trainServerLoop runs the server's loop through its session
// (training.Trainer.RunSession: checkpoint at every evaluation, metrics, one
// more checkpoint at the end) until the run's rounds are done, the shuffler
// reports the budget spent, or ctx is cancelled (StopCancelled, after
// checkpointing: the node interrupts the wait for a batch); the node's
// metrics hear every round and evaluation. Then the node tells the shuffler
// the run is finished.
func trainServerLoop(ctx context.Context, tr *training.Trainer, session *statedir.Session, srv *node.Server, hooks training.Hooks) (training.StopReason, error) {
	stop := context.AfterFunc(ctx, srv.Interrupt)
	defer stop()
	onRound, onEval := hooks.OnRound, hooks.OnEval
	hooks.OnRound = func(r training.RoundStats) error {
		srv.RoundApplied(r.Reports, r.Refused)
		if onRound != nil {
			return onRound(r)
		}
		return nil
	}
	hooks.OnEval = func(r metrics.Record) error {
		srv.Evaluated(r.TestAccuracy, r.TestAccuracyEMA)
		if onEval != nil {
			return onEval(r)
		}
		return nil
	}
	reason, err := tr.RunSession(ctx, session, hooks)
	if errors.Is(err, node.ErrStopped) {
		reason, err = training.StopCancelled, nil
	}
	srv.Finish()
	return reason, err
}

// freshPaths are the paths of a start that did not exist before it: a
// refused start removes them, so that it leaves no state behind.
type freshPaths []string

// newFreshPaths returns those of paths ("" skipped) that do not exist now.
func newFreshPaths(paths ...string) freshPaths {
	var out freshPaths
	for _, p := range paths {
		if p == "" {
			continue
		}
		if _, err := os.Lstat(p); errors.Is(err, os.ErrNotExist) {
			out = append(out, p)
		}
	}
	return out
}

// remove removes the fresh paths (what the refused start created there).
func (fp freshPaths) remove() {
	for _, p := range fp {
		os.RemoveAll(p)
	}
}

func derefInt(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}
