package federated

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"strings"

	"github.com/spf13/pflag"

	"github.com/shuffledp/shuffledp/cliflag"
	"github.com/shuffledp/shuffledp/deploy"
	"github.com/shuffledp/shuffledp/model"
	"github.com/shuffledp/shuffledp/node"
	"github.com/shuffledp/shuffledp/training"
)

// trainFlags are the server's train flags, as `shuffledp server` binds
// them (but for --preset: a paper's preset names a Go model).
type trainFlags struct {
	training.Options
	Metrics string `flag:"metrics" metavar:"FILE" usage:"write one JSON object per evaluation to this JSONL FILE (default: DIR/metrics.jsonl)"`
	State   string `flag:"state" metavar:"DIR" usage:"state directory of the run (DIR)"`
}

// nodeFlags are the server's flags that are not part of the run's identity
// (as `shuffledp server`'s).
var nodeFlags = []string{"listen", "pki", "addr-file", "metrics-listen", "metrics-addr-file", "batch-timeout", "http", "http-addr-file", "state", "help"}

// parse parses args into a flag set named for role, errors naming it.
func parse(role string, fs *pflag.FlagSet, args []string) error {
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%s: %w", role, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%s: unexpected arguments %q", role, fs.Args())
	}
	return nil
}

// ServerModel is the caller's model on the server: its initial parameters,
// its step and its evaluation (deploy.External).
type ServerModel = deploy.External

// RunServer runs the server process of `shuffledp server ARGS` (the train
// flags, --listen, --state, --pki, ...) over the caller's model m: --model
// must be external or absent. It returns the outcome (its Reason is ""
// when the run had finished before) once the run ends, fails or ctx is
// cancelled. stderr hears the process's lines.
func RunServer(ctx context.Context, args []string, m ServerModel, stderr io.Writer) (deploy.ServerOutcome, error) {
	var (
		f      trainFlags
		pkiDir string
		p      deploy.ServerProcess
	)
	fs := pflag.NewFlagSet("server", pflag.ContinueOnError)
	if err := cliflag.Bind(fs, &f); err != nil {
		return deploy.ServerOutcome{}, err
	}
	if err := cliflag.Bind(fs, &p); err != nil {
		return deploy.ServerOutcome{}, err
	}
	fs.StringVar(&p.Listen, "listen", "127.0.0.1:7060", "ADDR to listen on")
	fs.StringVar(&pkiDir, "pki", "", "the server's bundle DIR")
	fs.StringVar(&p.AddrFile, "addr-file", "", "write the address listened on to this FILE")
	if err := parse("server", fs, args); err != nil {
		return deploy.ServerOutcome{}, err
	}
	if fs.Changed("model") && f.Model != model.ExternalName {
		return deploy.ServerOutcome{}, fmt.Errorf("model: the Python API's server trains its own model (external), got --model %s", f.Model)
	}
	if err := fs.Set("model", model.ExternalName); err != nil {
		return deploy.ServerOutcome{}, err
	}
	if m.Update == nil {
		return deploy.ServerOutcome{}, errors.New("the server update function is required")
	}
	if err := deploy.CheckServerOptions(f.State, pkiDir, f.Options); err != nil {
		return deploy.ServerOutcome{}, err
	}
	cfg, err := f.Options.Config(fs.Changed, append([]string{"shuffledp-python", "server"}, args...))
	if err != nil {
		return deploy.ServerOutcome{}, err
	}
	ncfg, err := deploy.ServerNode(cfg, f.Options, pkiDir)
	if err != nil {
		return deploy.ServerOutcome{}, err
	}
	ncfg.Log = log.New(stderr, "server: ", 0)
	identity := cfg.Identity(cliflag.Values(fs, nodeFlags...), func(name string) bool {
		return fs.Lookup(name).Value.String() == fs.Lookup(name).DefValue
	})
	identity["theta0-length"] = fmt.Sprint(len(m.Theta0))
	p.Config = deploy.ServerConfig{Options: f.Options, Train: cfg, State: f.State, Metrics: f.Metrics, Flags: identity, Node: ncfg, External: &m}
	p.Stdout, p.Stderr = stderr, stderr
	p.Hooks.OnEval = deploy.PrintEvaluations(stderr, cfg.TotalRounds())
	out, err := deploy.RunServer(ctx, p)
	if err != nil || out.Reason == "" {
		return out, err
	}
	return out, out.WriteEnd(stderr, cfg.Delta)
}

// RunShuffler runs the shuffler process of `shuffledp shuffler ARGS` until
// its run ends or ctx is cancelled.
func RunShuffler(ctx context.Context, args []string, stderr io.Writer) error {
	var p deploy.ShufflerProcess
	fs := pflag.NewFlagSet("shuffler", pflag.ContinueOnError)
	if err := cliflag.Bind(fs, &p); err != nil {
		return err
	}
	fs.StringVar(&p.Listen, "listen", "127.0.0.1:7061", "ADDR to listen on for clients")
	fs.StringVar(&p.AddrFile, "addr-file", "", "write the address listened on to this FILE")
	if err := parse("shuffler", fs, args); err != nil {
		return err
	}
	p.Stderr, p.Node.Log = stderr, log.New(stderr, "shuffler: ", 0)
	return deploy.RunShuffler(ctx, p)
}

// RunClients runs the client pool of `shuffledp client ARGS` (--shuffler,
// --server, --clients LO:HI, --pki, --credentials, ...) whose clients'
// updates come from update, each given the indices of the examples the
// run's partition deals its client, until the run ends or ctx is
// cancelled. --data-dir is read only for the labels of a partition that
// deals by label (dirichlet, shards on mnist).
func RunClients(ctx context.Context, args []string, update node.UpdateFunc, stderr io.Writer) error {
	if update == nil {
		return errors.New("the client update function is required")
	}
	var p deploy.ClientProcess
	fs := pflag.NewFlagSet("client", pflag.ContinueOnError)
	if err := cliflag.Bind(fs, &p); err != nil {
		return err
	}
	if err := parse("client", fs, args); err != nil {
		return err
	}
	p.Stderr, p.Pool.Log, p.Pool.Update = stderr, log.New(stderr, "client: ", 0), update
	return deploy.RunClients(ctx, p)
}

// Role names the roles RunRole runs.
var Roles = []string{"server", "shuffler", "client"}

// checkRole returns an error unless role is one of Roles.
func checkRole(role string) error {
	for _, r := range Roles {
		if r == role {
			return nil
		}
	}
	return fmt.Errorf("role must be one of %s, got %q", strings.Join(Roles, ", "), role)
}
