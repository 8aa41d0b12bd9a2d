package main

import (
	"errors"
	"fmt"
	"log"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/shuffledp/shuffledp/node"
	"github.com/shuffledp/shuffledp/pki"
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
	var (
		shufAddr, srvAddr, clients, dataDir, pkiDir, credFile string
		workers                                               int
		connectTimeout                                        time.Duration
		dropout                                               float64
	)
	cmd := &cobra.Command{
		Use:   "client --shuffler ADDR --server ADDR --clients LO:HI --data-dir DIR --pki DIR --credentials FILE",
		Short: "Run a pool of clients of a networked run (one process, many simulated clients)",
		Long:  longHelp("client"),
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch {
			case shufAddr == "" || srvAddr == "":
				return errors.New("shuffler and server are required: their ADDRs")
			case pkiDir == "":
				return errors.New("pki is required: the client bundle (DIR/client of `shuffledp pki init --dir DIR`)")
			case credFile == "":
				return errors.New("credentials is required: the file shuffledp pki enrol wrote for these clients")
			}
			lo, hi, err := parseRange("clients", clients)
			if err != nil {
				return err
			}
			if workers < 1 {
				return fmt.Errorf("workers must be >= 1, got %d", workers)
			}
			creds, err := pki.ReadCredentials(credFile)
			if err != nil {
				return err
			}
			tc, err := pki.ClientTLS(pkiDir, pki.RoleClient)
			if err != nil {
				return err
			}
			pool, err := node.NewClientPool(node.ClientPoolConfig{Shuffler: shufAddr, Server: srvAddr, TLS: tc, Credentials: creds,
				Lo: lo, Hi: hi, DataDir: dataDir, Workers: workers, ConnectTimeout: connectTimeout, Dropout: dropout,
				Log: log.New(cmd.ErrOrStderr(), "client: ", 0)})
			if err != nil {
				return err
			}
			parent := commandContext(cmd)
			ctx, stop := signalContext(parent)
			defer stop()
			err = pool.Run(ctx)
			if dropout > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "client: %d sampled clients ignored their round (--dropout simulation)\n", pool.Dropped())
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "client: %d reports accepted by the shuffler\n", pool.Reports())
			return orInterrupted(ctx, err)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&shufAddr, "shuffler", "", "the shuffler's `ADDR`")
	fl.StringVar(&srvAddr, "server", "", "the server's `ADDR` (for the run specification and key configs)")
	fl.StringVar(&clients, "clients", "", "the clients `LO:HI` this process hosts (client i holds training example i)")
	fl.StringVar(&dataDir, "data-dir", "", "`DIR` holding the run's data set (mnist); not needed for synthetic")
	fl.StringVar(&pkiDir, "pki", "", "the client bundle `DIR` (DIR/client of shuffledp pki init: ca.pem, client.pem, client.key)")
	fl.StringVar(&credFile, "credentials", "", "the clients' credentials `FILE` (shuffledp pki enrol)")
	fl.IntVar(&workers, "workers", 1, "goroutines computing reports")
	fl.DurationVar(&connectTimeout, "connect-timeout", node.DefaultConnectTimeout, "how long to wait for the server and the shuffler to answer (and to accept the registration), at start and after the shuffler went away mid-run; then exit 1 naming what was waited for")
	fl.Float64Var(&dropout, "dropout", 0, "SIMULATION of unreliable devices: each sampled client ignores a round with probability `P` (coins from crypto/rand); the shuffler puts a dummy in its place at the deadline")
	return cmd
}
