package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/shuffledp/shuffledp/cliflag"
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
	cliflag.MustBind(cmd.Flags(), &u.f)
	cliflag.MustBind(cmd.Flags(), &u.c)
	return cmd
}

// upFlags are the flags of up: the train flags and the deployment's own
// (cluster.Config's).
type upFlags struct {
	f trainFlags
	c cluster.Config
}

// runUp starts the server, the shuffler and the client processes and waits
// for the run to end or to be stopped.
func runUp(cmd *cobra.Command, u *upFlags) error {
	f, c := &u.f, u.c
	if f.State == "" {
		return errors.New("state is required: the run's state directory")
	}
	if f.Metrics != "" {
		return errors.New("metrics: up writes the metrics to DIR/metrics.jsonl")
	}
	tc, err := trainConfig(cmd, f) // refuse bad flags before starting anything
	if err != nil {
		return err
	}
	if c.ClientProcesses < 1 {
		return fmt.Errorf("client-processes must be >= 1, got %d", c.ClientProcesses)
	}
	if c.Exe, err = os.Executable(); err != nil {
		return err
	}
	// The server takes the train flags given to up, without up's own.
	c.TrainArgs = cliflag.Args(cmd.Flags(), "state", "client-processes", "round-timeout", "prometheus", "dashboard", "release-when-complete", "min-connected", "dropout", "shards", "ledger", "standby")
	c.State, c.Clients, c.DataDir, c.Workers, c.Stderr = f.State, f.Clients, f.DataDir, f.Workers, cmd.ErrOrStderr()
	if c.Workers == 0 {
		c.Workers = 1
	}
	c.Delta, c.TargetEpsilon, c.Adjacency, c.Bound = tc.Delta, tc.TargetEpsilon, tc.ShufflerAdjacency(), tc.Bound
	if !c.ReleaseWhenComplete {
		d := "the shuffler's default, " + node.DefaultRoundTimeout.String()
		if c.RoundTimeout > 0 {
			d = c.RoundTimeout.String()
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "up: every round is released at its deadline (--round-timeout: %s), with dummy reports for sampled clients that did not deliver; a local run without dropouts can add --release-when-complete\n", d)
	}
	ctx, stop := signalContext(commandContext(cmd))
	defer stop()
	err = cluster.Up(ctx, c)
	if errors.Is(err, cluster.ErrInterrupted) {
		fmt.Fprintf(cmd.ErrOrStderr(), "up: stopped; state saved in %s; run the same command again to resume\n", f.State)
		return errInterrupted
	}
	if err != nil {
		return err
	}
	if c.Shards > 1 {
		fmt.Fprintf(cmd.OutOrStdout(), "up: run finished; metrics in %s/metrics.jsonl, ledger: shuffledp ledger shards --ledger URL\n", f.State)
		return nil
	}
	fmt.Fprintf(cmd.OutOrStdout(), "up: run finished; metrics in %s/metrics.jsonl, ledger: shuffledp ledger show --state %s\n", f.State, f.State)
	return nil
}
