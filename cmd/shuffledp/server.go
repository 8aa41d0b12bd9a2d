package main

import (
	"fmt"
	"log"

	"github.com/spf13/cobra"

	"github.com/shuffledp/shuffledp/cliflag"
	"github.com/shuffledp/shuffledp/deploy"
	"github.com/shuffledp/shuffledp/training"
)

func init() { rootCmd.AddCommand(newServerCmd()) }

// nodeFlags are the flags a role command adds beside the train flags; they
// are not part of the run's identity in its state directory.
var nodeFlags = []string{"listen", "pki", "addr-file", "metrics-listen", "metrics-addr-file", "batch-timeout", "http", "http-addr-file"}

func newServerCmd() *cobra.Command {
	var (
		f      trainFlags
		pkiDir string
		p      deploy.ServerProcess
	)
	cmd := &cobra.Command{
		Use:   "server --listen ADDR --state DIR --pki DIR [train flags]",
		Short: "Run the server role of a networked run (model, optimizer, evaluation, metrics; opens reports)",
		Long:  longHelp("server"),
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if p.Config, err = serverConfig(cmd, &f, pkiDir); err != nil {
				return err
			}
			return runServer(cmd, p)
		},
	}
	fl := cmd.Flags()
	cliflag.MustBind(fl, &f)
	cliflag.MustBind(fl, &p)
	fl.StringVar(&p.Listen, "listen", "127.0.0.1:7060", "`ADDR` to listen on (host:port; port 0 picks a free port)")
	fl.StringVar(&pkiDir, "pki", "", "the server's bundle `DIR` (DIR/server of shuffledp pki init: ca.pem, server.pem, server.key)")
	fl.StringVar(&p.AddrFile, "addr-file", "", "write the address listened on to this `FILE` (for --listen with port 0)")
	fl.MarkHidden("addr-file")
	return cmd
}

// runServer runs the server process (deploy.RunServer), printing every
// evaluation and the end; an interrupted run exits 130 with its state
// saved.
func runServer(cmd *cobra.Command, p deploy.ServerProcess) error {
	p.Stdout, p.Stderr = cmd.OutOrStdout(), cmd.ErrOrStderr()
	p.Hooks.OnEval = deploy.PrintEvaluations(p.Stderr, p.Config.Train.TotalRounds())
	ctx, stop := signalContext(commandContext(cmd))
	defer stop()
	out, err := deploy.RunServer(ctx, p)
	if err != nil || out.Reason == "" {
		return err
	}
	if err := out.WriteEnd(p.Stdout, p.Config.Train.Delta); err != nil {
		return err
	}
	if out.Reason == training.StopCancelled {
		fmt.Fprintf(p.Stderr, "server: state saved in %s; run the same command again to resume\n", out.Dir)
		return errInterrupted
	}
	return nil
}

// serverConfig checks the server's own flags and returns the server
// process's configuration.
func serverConfig(cmd *cobra.Command, f *trainFlags, pkiDir string) (deploy.ServerConfig, error) {
	if err := deploy.CheckServerOptions(f.State, pkiDir, f.Options); err != nil {
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
	ncfg.Log = log.New(cmd.ErrOrStderr(), "server: ", 0)
	flags := trainRunFlags(cmd, cfg, nodeFlags...)
	return deploy.ServerConfig{Options: f.Options, Train: cfg, State: f.State, Metrics: f.Metrics, Flags: flags, Node: ncfg}, nil
}
