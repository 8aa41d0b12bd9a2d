package federated

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/shuffledp/shuffledp/cliflag"
	"github.com/shuffledp/shuffledp/cluster"
	"github.com/shuffledp/shuffledp/model"
	"github.com/shuffledp/shuffledp/training"
)

// upOwn are up's flags that the server does not take.
var upOwn = []string{"state", "client-processes", "round-timeout", "prometheus", "dashboard", "release-when-complete", "min-connected", "dropout", "shards", "ledger", "standby"}

// Launcher starts the roles of Up: Command is a command line that,
// followed by a role's name and flags, runs that role with the caller's
// functions, as RunServer, RunShuffler and RunClients do
// (cluster.Config.Launch); Env is added to its environment (a shared
// library's process cannot pass its own later changes: Go reads the
// environment once, when it is loaded).
type Launcher struct {
	Command []string `json:"launch"`
	Env     []string `json:"env,omitempty"`
}

// Up runs `shuffledp up ARGS` (the train flags, --state DIR and up's own
// flags) with every role started through launch. --model must be external
// or absent. It returns when the run ends
// (nil), a role fails, or ctx is cancelled (cluster.ErrInterrupted).
func Up(ctx context.Context, args []string, launch Launcher, stderr io.Writer) error {
	var (
		o     training.Options
		state string
		c     cluster.Config
	)
	fs := pflag.NewFlagSet("up", pflag.ContinueOnError)
	if err := cliflag.Bind(fs, &o); err != nil {
		return err
	}
	if err := cliflag.Bind(fs, &c); err != nil {
		return err
	}
	fs.StringVar(&state, "state", "", "the run's state DIR")
	if err := parse("up", fs, args); err != nil {
		return err
	}
	switch {
	case len(launch.Command) == 0:
		return errors.New("up: the launcher command line is required")
	case state == "":
		return errors.New("state is required: the run's state directory")
	case fs.Changed("model") && o.Model != model.ExternalName:
		return fmt.Errorf("model: the Python API trains its own model (external), got --model %s", o.Model)
	case c.ClientProcesses < 1:
		return fmt.Errorf("client-processes must be >= 1, got %d", c.ClientProcesses)
	}
	if err := fs.Set("model", model.ExternalName); err != nil {
		return err
	}
	tc, err := o.Config(fs.Changed, append([]string{"shuffledp-python", "up"}, args...)) // refuse bad flags before starting anything
	if err != nil {
		return err
	}
	if err := tc.CheckNetworked(); err != nil {
		return err
	}
	words := &lastWords{w: stderr, last: map[string]string{}}
	c.Launch, c.Env, c.State, c.Clients, c.Workers, c.Stderr = launch.Command, launch.Env, state, tc.Clients, max(o.Workers, 1), words
	c.DataDir = o.DataDir // the labels of a partition by label (the clients compute on their own data)
	c.TrainArgs = cliflag.Args(fs, upOwn...)
	c.Delta, c.TargetEpsilon, c.Adjacency = tc.Delta, tc.TargetEpsilon, tc.ShufflerAdjacency()
	if err := cluster.Up(ctx, c); err != nil && !errors.Is(err, cluster.ErrInterrupted) {
		return words.explain(err)
	} else if err != nil {
		return err
	}
	return nil
}
