package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/shuffledp/shuffledp/cluster"
	"github.com/shuffledp/shuffledp/deploy"
	"github.com/shuffledp/shuffledp/federated"
	"github.com/shuffledp/shuffledp/node"
	"github.com/shuffledp/shuffledp/server"
	"github.com/shuffledp/shuffledp/training"
)

// runRequest is shuffledp_run's request: the role's flags (those of
// `shuffledp server`, `shuffler`, `client` or `up`) and, for up, the
// launcher command line of the roles.
type runRequest struct {
	Args []string `json:"args"`
	federated.Launcher
}

// callbacks are the caller's functions (nil where not given) and theta_0.
type callbacks struct {
	theta0 []float64
	client node.UpdateFunc
	server server.Update
	eval   training.Evaluator
}

// runResult is shuffledp_run's result.
type runResult struct {
	// Role is the role that ran; Reason why a server stopped ("" for the
	// others, and for a server whose run had finished before).
	Role   string `json:"role"`
	Reason string `json:"reason,omitempty"`
	// Interrupted: a signal (SIGINT, SIGTERM) stopped the role; its state
	// is saved.
	Interrupted bool `json:"interrupted,omitempty"`
}

// run runs role until it ends, fails or the process gets SIGINT or
// SIGTERM (then the role stops as the command's does: the server
// checkpoints, up stops its children in order). It returns
// {"result": runResult} or {"error": message}.
func run(role string, req runRequest, fns callbacks, stderr io.Writer) []byte {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res := runResult{Role: role}
	var err error
	switch role {
	case "server":
		var out deploy.ServerOutcome
		out, err = federated.RunServer(ctx, req.Args, federated.ServerModel{Theta0: fns.theta0, Update: fns.server, Evaluate: fns.eval}, stderr)
		res.Reason = string(out.Reason)
	case "shuffler":
		err = federated.RunShuffler(ctx, req.Args, stderr)
	case "client":
		if fns.client == nil {
			err = errors.New("the client update function is required")
			break
		}
		err = federated.RunClients(ctx, req.Args, fns.client, stderr)
	case "up":
		err = federated.Up(ctx, req.Args, req.Launcher, stderr)
		if errors.Is(err, cluster.ErrInterrupted) {
			err = nil
		}
	default:
		err = fmt.Errorf("role must be one of server, shuffler, client, up; got %q", role)
	}
	if err != nil {
		return errorJSON(err)
	}
	res.Interrupted = ctx.Err() != nil
	b, err := json.Marshal(map[string]any{"result": res})
	if err != nil {
		return errorJSON(err)
	}
	return b
}

// errorJSON is {"error": err's message}.
func errorJSON(err error) []byte {
	b, _ := json.Marshal(map[string]string{"error": err.Error()})
	return b
}
