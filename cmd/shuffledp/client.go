package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/shuffledp/shuffledp/deploy"
	"github.com/shuffledp/shuffledp/node"
	"github.com/shuffledp/shuffledp/pki"
	"github.com/shuffledp/shuffledp/telemetry"
)

func init() { rootCmd.AddCommand(newClientCmd()) }

// parseRange parses LO:HI (0 <= LO < HI).
func parseRange(flag, s string) (lo, hi int64, err error) {
	a, b, ok := strings.Cut(s, ":")
	if ok {
		lo, err = strconv.ParseInt(a, 10, 64)
		if err == nil {
			hi, err = strconv.ParseInt(b, 10, 64)
		}
	}
	if !ok || err != nil || lo < 0 || hi <= lo {
		return 0, 0, fmt.Errorf("%s must be LO:HI with 0 <= LO < HI, got %q", flag, s)
	}
	return lo, hi, nil
}

func newClientCmd() *cobra.Command {
	var f clientFlags
	cmd := &cobra.Command{
		Use:   "client --shuffler ADDR --server ADDR --clients LO:HI --data-dir DIR --pki DIR --credentials FILE",
		Short: "Run a pool of clients of a networked run (one process, many simulated clients)",
		Long:  longHelp("client"),
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return runClient(cmd, &f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.shufAddr, "shuffler", "", "the shuffler's `ADDR`")
	fl.StringVar(&f.srvAddr, "server", "", "the server's `ADDR` (for the run specification and key configs)")
	fl.StringVar(&f.clients, "clients", "", "the clients `LO:HI` this process hosts (client i holds training example i)")
	fl.StringVar(&f.dataDir, "data-dir", "", "`DIR` holding the run's data set (mnist); not needed for synthetic")
	fl.StringVar(&f.pkiDir, "pki", "", "the client bundle `DIR` (DIR/client of shuffledp pki init: ca.pem, client.pem, client.key)")
	fl.StringVar(&f.credFile, "credentials", "", "the clients' credentials `FILE` (shuffledp pki enrol)")
	fl.IntVar(&f.workers, "workers", 1, "goroutines computing reports")
	fl.DurationVar(&f.connectTimeout, "connect-timeout", node.DefaultConnectTimeout, "how long to wait for the server and the shuffler to answer (and to accept the registration), at start and after the shuffler went away mid-run; then exit 1 naming what was waited for")
	fl.StringVar(&f.metricsListen, "metrics-listen", "", "serve this process's health (Go runtime and process metrics only: no per-round figure, since how often a pool's clients are sampled is who was sampled) at http://`ADDR`/metrics (empty: off)")
	fl.StringVar(&f.metricsAddrTo, "metrics-addr-file", "", "write the metrics address to this `FILE`")
	fl.MarkHidden("metrics-addr-file")
	fl.Float64Var(&f.dropout, "dropout", 0, "SIMULATION of unreliable devices: each sampled client ignores a round with probability `P` (coins from crypto/rand); the shuffler puts a dummy in its place at the deadline")
	return cmd
}

// clientFlags are the flags of client.
type clientFlags struct {
	shufAddr, srvAddr, clients, dataDir, pkiDir, credFile string
	metricsListen, metricsAddrTo                          string
	workers                                               int
	connectTimeout                                        time.Duration
	dropout                                               float64
}

// runClient runs the pool of clients until the run ends or it is stopped.
func runClient(cmd *cobra.Command, f *clientFlags) error {
	switch {
	case f.shufAddr == "" || f.srvAddr == "":
		return errors.New("shuffler and server are required: their ADDRs")
	case f.pkiDir == "":
		return errors.New("pki is required: the client bundle (DIR/client of `shuffledp pki init --dir DIR`)")
	case f.credFile == "":
		return errors.New("credentials is required: the file shuffledp pki enrol wrote for these clients")
	}
	lo, hi, err := parseRange("clients", f.clients)
	if err != nil {
		return err
	}
	if f.workers < 1 {
		return fmt.Errorf("workers must be >= 1, got %d", f.workers)
	}
	creds, err := pki.ReadCredentials(f.credFile)
	if err != nil {
		return err
	}
	tc, err := pki.ClientTLS(f.pkiDir, pki.RoleClient)
	if err != nil {
		return err
	}
	pool, err := node.NewClientPool(node.ClientPoolConfig{Shuffler: f.shufAddr, Server: f.srvAddr, TLS: tc, Credentials: creds,
		Lo: lo, Hi: hi, DataDir: f.dataDir, Workers: f.workers, ConnectTimeout: f.connectTimeout, Dropout: f.dropout,
		Log: log.New(cmd.ErrOrStderr(), "client: ", 0)})
	if err != nil {
		return err
	}
	parent := commandContext(cmd)
	ctx, stop := signalContext(parent)
	defer stop()
	mctx, mstop := context.WithCancel(context.Background())
	waitMetrics, err := deploy.ServeMetrics(mctx, "client", f.metricsListen, f.metricsAddrTo, telemetry.NewRegistry(), cmd.ErrOrStderr())
	if err != nil {
		mstop()
		return err
	}
	defer func() { mstop(); waitMetrics() }()
	err = pool.Run(ctx)
	if f.dropout > 0 {
		fmt.Fprintf(cmd.ErrOrStderr(), "client: %d sampled clients ignored their round (--dropout simulation)\n", pool.Dropped())
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "client: %d reports accepted by the shuffler\n", pool.Reports())
	return orInterrupted(ctx, err)
}
