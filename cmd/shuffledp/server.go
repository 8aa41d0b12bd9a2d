package main

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/spf13/cobra"

	"github.com/shuffledp/shuffledp/metrics"
	"github.com/shuffledp/shuffledp/model"
	"github.com/shuffledp/shuffledp/node"
	"github.com/shuffledp/shuffledp/pki"
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

TLS: --pki DIR holds ca.pem and the server's certificate and key
(shuffledp pki init). Only the holder of the shuffler's certificate may pull the
model or submit batches.

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
	cmd.Flags().StringVar(&pkiDir, "pki", "", "PKI `DIR` (ca.pem, server.pem, server.key; see shuffledp pki init)")
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
		return errors.New("pki is required: a directory made by `shuffledp pki init`")
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
	tlsConf, err := pki.ServerTLS(pkiDir, pki.RoleServer)
	if err != nil {
		return err
	}
	flags := trainRunFlags(cmd, cfg)
	for _, n := range nodeFlags {
		delete(flags, n)
	}
	parent := commandContext(cmd)
	var serverMetrics *telemetry.ServerMetrics
	reg := telemetry.NewRegistry()
	if metricsListen != "" {
		if serverMetrics, err = telemetry.NewServerMetrics(reg); err != nil {
			return err
		}
	}
	srv, err := node.NewServer(parent, node.ServerConfig{
		Metrics: serverMetrics,
		Train:   cfg,
		Session: training.SessionConfig{Dir: f.state, Flags: flags, MayDiffer: trainMayDiffer, Metrics: f.metrics},
		Dataset: node.Dataset{Name: f.dataset, Seed: f.seed},
		TLS:     tlsConf,
	})
	if err != nil {
		return err
	}
	defer srv.Close()
	_, test, err := loadTrainData(f)
	if err != nil {
		return err
	}
	m, err := model.New(f.model, test.Dim, test.Classes)
	if err != nil {
		return err
	}
	m.Init(model.NewInitRNG(f.seed))
	done, err := srv.Attach(m, test)
	if err != nil {
		return err
	}
	lis, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
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
	cfg = srv.Config()
	total := cfg.TotalRounds()
	fmt.Fprintf(stderr, "server: run %s in %s, listening on %s; %s on %d clients, k=%d, %s eps0 %g, %d rounds (resuming at %d)\n",
		srv.Session().Run(), srv.Session().Dir(), lis.Addr(), m.Name(), cfg.Clients, cfg.Sample, cfg.Randomizer, cfg.Eps0, total, done)

	ctx, stop := signalContext(parent)
	defer stop()
	var last metrics.Record
	reason, err := srv.Train(ctx, training.Hooks{OnEval: func(r metrics.Record) error {
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
		fmt.Fprintf(stderr, "server: state saved in %s; run the same command again to resume\n", srv.Session().Dir())
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
