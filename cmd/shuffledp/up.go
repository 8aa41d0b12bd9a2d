package main

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/shuffledp/shuffledp/cluster"
	"github.com/shuffledp/shuffledp/node"
)

func init() { rootCmd.AddCommand(newUpCmd()) }

func newUpCmd() *cobra.Command {
	var u upFlags
	cmd := &cobra.Command{
		Use:   "up [train flags] --state DIR",
		Short: "Run the whole networked system on this machine: server, shuffler and clients as separate processes",
		Long:  longHelp("up"),
		Example: `  shuffledp up --dataset synthetic --model logreg --clients 200 --sample 20 --epochs 1 --state runs/up
  shuffledp ledger show --state runs/up --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runUp(cmd, &u) },
	}
	addTrainFlags(cmd.Flags(), &u.f)
	cmd.Flags().IntVar(&u.procs, "client-processes", 1, "client processes sharing the clients (each hosts a contiguous range)")
	cmd.Flags().DurationVar(&u.roundTimeout, "round-timeout", 0, "the shuffler's round deadline: every round is released this long after it was relayed, dummies for the sampled clients that have not delivered (0: the shuffler's default, 2m)")
	cmd.Flags().BoolVar(&u.whenComplete, "release-when-complete", false, "the shuffler releases a round as soon as every sampled client delivered (sound only if dropout is independent of the data and equally likely for every client; see shuffledp shuffler --help)")
	cmd.Flags().IntVar(&u.minConnected, "min-connected", 0, "registered clients the shuffler waits for before the first round (0: all)")
	cmd.Flags().Float64Var(&u.dropout, "dropout", 0, "SIMULATION: each sampled client ignores a round with this probability (unreliable devices); its slot gets a dummy at the deadline")
	cmd.Flags().BoolVar(&u.dashboard, "dashboard", false, "serve the server's and the shuffler's live pages on loopback ports (addresses printed and written to DIR/server.http-addr, DIR/shuffler.http-addr; see --http of server and shuffler)")
	cmd.Flags().IntVar(&u.shards, "shards", 1, "shuffler shards (docs/shards.md): S shufflers, each with its clients, sharing the PostgreSQL --ledger; S must divide --clients and --sample")
	cmd.Flags().StringVar(&u.ledger, "ledger", "", "the shards' shared ledger `URL` (postgres://...), with --shards")
	cmd.Flags().BoolVar(&u.standby, "standby", false, "with --shards: a standby shuffler per shard on its address, which takes the shard over when the active one dies")
	cmd.Flags().BoolVar(&u.prometheus, "prometheus", false, "serve the server's and the shuffler's Prometheus metrics on loopback ports (addresses printed; see --metrics-listen of server and shuffler)")
	return cmd
}

// upFlags are the flags of up: the train flags and the deployment's own.
type upFlags struct {
	f            trainFlags
	procs        int
	roundTimeout time.Duration
	prometheus   bool
	dashboard    bool
	whenComplete bool
	minConnected int
	dropout      float64
	shards       int
	ledger       string
	standby      bool
}

// runUp starts the server, the shuffler and the client processes and waits
// for the run to end or to be stopped.
func runUp(cmd *cobra.Command, u *upFlags) error {
	f := &u.f
	if f.state == "" {
		return errors.New("state is required: the run's state directory")
	}
	if f.metrics != "" {
		return errors.New("metrics: up writes the metrics to DIR/metrics.jsonl")
	}
	tc, err := trainConfig(cmd, f) // refuse bad flags before starting anything
	if err != nil {
		return err
	}
	if u.procs < 1 {
		return fmt.Errorf("client-processes must be >= 1, got %d", u.procs)
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	args := upTrainArgs(cmd)
	workers := f.Workers
	if workers == 0 {
		workers = 1
	}
	if !u.whenComplete {
		d := "the shuffler's default, " + node.DefaultRoundTimeout.String()
		if u.roundTimeout > 0 {
			d = u.roundTimeout.String()
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "up: every round is released at its deadline (--round-timeout: %s), with dummy reports for sampled clients that did not deliver; a local run without dropouts can add --release-when-complete\n", d)
	}
	parent := commandContext(cmd)
	ctx, stop := signalContext(parent)
	defer stop()
	err = cluster.Up(ctx, cluster.Config{Exe: exe, State: f.state, TrainArgs: args, Clients: f.Clients, DataDir: f.DataDir,
		ClientProcesses: u.procs, Workers: workers, RoundTimeout: u.roundTimeout, Stderr: cmd.ErrOrStderr(),
		Delta: tc.Delta, TargetEpsilon: tc.TargetEpsilon, Adjacency: tc.ShufflerAdjacency(), Metrics: u.prometheus, Dashboard: u.dashboard,
		ReleaseWhenComplete: u.whenComplete, MinConnected: u.minConnected, Dropout: u.dropout, Shards: u.shards, Ledger: u.ledger, Standby: u.standby})
	if errors.Is(err, cluster.ErrInterrupted) {
		fmt.Fprintf(cmd.ErrOrStderr(), "up: stopped; state saved in %s; run the same command again to resume\n", f.state)
		return errInterrupted
	}
	if err != nil {
		return err
	}
	if u.shards > 1 {
		fmt.Fprintf(cmd.OutOrStdout(), "up: run finished; metrics in %s/metrics.jsonl, ledger: shuffledp ledger shards --ledger URL\n", f.state)
		return nil
	}
	fmt.Fprintf(cmd.OutOrStdout(), "up: run finished; metrics in %s/metrics.jsonl, ledger: shuffledp ledger show --state %s\n", f.state, f.state)
	return nil
}

// upTrainArgs are the flags given to up that its server takes: the train
// flags, without up's own.
func upTrainArgs(cmd *cobra.Command) []string {
	var args []string
	cmd.Flags().Visit(func(fl *pflag.Flag) {
		switch fl.Name {
		case "state", "client-processes", "round-timeout", "prometheus", "dashboard", "release-when-complete", "min-connected", "dropout", "shards", "ledger", "standby":
			return
		}
		args = append(args, "--"+fl.Name+"="+fl.Value.String())
	})
	return args
}
