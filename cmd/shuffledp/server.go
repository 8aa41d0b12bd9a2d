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
		Long:  longHelp("server"),
		Args:  cobra.NoArgs,
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
	cfg, flags, ncfg, err := serverConfig(cmd, f, pkiDir)
	if err != nil {
		return err
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
	reg := telemetry.NewRegistry()
	if metricsListen != "" {
		if ncfg.Metrics, err = telemetry.NewServerMetrics(reg); err != nil {
			return err
		}
	}
	role, err := openServerRole(commandContext(cmd), f, cfg, flags, ncfg)
	if err != nil {
		return err
	}
	defer role.Close() // before fresh.remove: the lock is released first
	started = true
	if cfg, done := role.tr.Config(), role.done; done >= cfg.TotalRounds() {
		// Nothing to serve: say so and exit at once (up then starts
		// neither the shuffler nor the clients).
		fmt.Fprintf(cmd.OutOrStdout(), "run %s already finished: %d of %d rounds done (state in %s); nothing to do\n",
			role.session.Run(), done, cfg.TotalRounds(), role.session.Dir())
		return nil
	}
	if err := node.WriteAddr(addrTo, lis.Addr().String()); err != nil {
		return err
	}
	go role.srv.Serve(lis)
	mctx, mstop := context.WithCancel(context.Background())
	waitMetrics, err := serveMetrics(mctx, "server", metricsListen, mAddrTo, reg, cmd.ErrOrStderr())
	if err != nil {
		mstop()
		return err
	}
	defer func() { mstop(); waitMetrics() }()
	return role.serve(cmd, lis.Addr())
}

// serverConfig checks the server's own flags and returns the run's
// configuration, its identity in the state directory, and the node's
// configuration but for its directory and metrics.
func serverConfig(cmd *cobra.Command, f *trainFlags, pkiDir string) (training.Config, map[string]string, node.ServerConfig, error) {
	var ncfg node.ServerConfig
	switch {
	case f.state == "":
		return training.Config{}, nil, ncfg, errors.New("state is required: the server's state directory (model checkpoint, metrics, HPKE key)")
	case pkiDir == "":
		return training.Config{}, nil, ncfg, errors.New("pki is required: the server's bundle (DIR/server of `shuffledp pki init --dir DIR`)")
	case f.Validation != 0:
		return training.Config{}, nil, ncfg, errors.New("validation: a networked server holds no training data to hold out")
	case f.CryptoNoise:
		return training.Config{}, nil, ncfg, errors.New("crypto-noise: clients of a networked run always draw their noise from crypto/rand")
	}
	cfg, err := trainConfig(cmd, f)
	if err != nil {
		return cfg, nil, ncfg, err
	}
	if err := cfg.CheckNetworked(); err != nil {
		return cfg, nil, ncfg, err
	}
	ncfg.Dataset = node.Dataset{Name: f.Dataset, Seed: f.Seed}
	if err := ncfg.Dataset.Validate(); err != nil {
		return cfg, nil, ncfg, err
	}
	if ncfg.TLS, err = pki.ServerTLS(pkiDir, pki.RoleServer); err != nil {
		return cfg, nil, ncfg, err
	}
	if err := node.CheckOwnCertificates("server", ncfg.TLS, time.Now()); err != nil {
		return cfg, nil, ncfg, err
	}
	flags := trainRunFlags(cmd, cfg)
	for _, n := range nodeFlags {
		delete(flags, n)
	}
	return cfg, flags, ncfg, nil
}

// serverRole is the server process: its state directory, the node (its
// transport) and its training loop.
type serverRole struct {
	session *statedir.Session
	srv     *node.Server
	tr      *training.Trainer
	done    int // rounds the checkpoint had completed
}

// openServerRole opens the state directory (with the run's flags), the
// node in it, the test set and the model (theta_0 from --seed), and the
// loop over the node, restored from the checkpoint.
func openServerRole(ctx context.Context, f *trainFlags, cfg training.Config, flags map[string]string, ncfg node.ServerConfig) (_ *serverRole, err error) {
	r := &serverRole{}
	if r.session, err = training.OpenSession(ctx, statedir.SessionConfig{Dir: f.state, Flags: flags, MayDiffer: training.ResumableFlags, Metrics: f.metrics}, &cfg); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			r.Close()
		}
	}()
	ncfg.Dir, ncfg.Delta, ncfg.TargetEpsilon = r.session.Dir(), cfg.Delta, cfg.TargetEpsilon
	if r.srv, err = node.NewServer(ncfg); err != nil {
		return nil, err
	}
	_, test, err := loadTrainData(f)
	if err != nil {
		return nil, err
	}
	m, err := model.New(f.Model, test.Dim, test.Classes)
	if err != nil {
		return nil, err
	}
	m.Init(model.NewInitRNG(f.Seed))
	if r.tr, r.done, err = attachServerLoop(r.session, r.srv, cfg, m, test); err != nil {
		return nil, err
	}
	return r, nil
}

// Close closes the node, then the session.
func (r *serverRole) Close() error {
	var errs []error
	if r.srv != nil {
		errs = append(errs, r.srv.Close())
	}
	if r.session != nil {
		errs = append(errs, r.session.Close())
	}
	return errors.Join(errs...)
}

// serve runs the loop until it stops, printing every evaluation and the
// end; an interrupted run exits 130 with its state saved.
func (r *serverRole) serve(cmd *cobra.Command, addr net.Addr) error {
	cfg, stderr := r.tr.Config(), cmd.ErrOrStderr()
	total := cfg.TotalRounds()
	fmt.Fprintf(stderr, "server: run %s in %s, listening on %s; %s on %d clients, k=%d, %s eps0 %g, %d rounds (resuming at %d); delta %g\n",
		r.session.Run(), r.session.Dir(), addr, r.tr.Model().Name(), cfg.Clients, cfg.Sample, cfg.Randomizer, cfg.Eps0, total, r.done, cfg.Delta)
	ctx, stop := signalContext(commandContext(cmd))
	defer stop()
	var last metrics.Record
	reason, err := trainServerLoop(ctx, r.tr, r.session, r.srv, training.Hooks{OnEval: func(rec metrics.Record) error {
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
		fmt.Fprintf(stderr, "server: state saved in %s; run the same command again to resume\n", r.session.Dir())
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
