package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

// commandContext returns cmd's context, or context.Background if it has
// none (a command run outside Execute, as in tests).
func commandContext(cmd *cobra.Command) context.Context {
	if ctx := cmd.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}

// signalContext returns a context derived from parent that is cancelled on
// SIGINT or SIGTERM, so that a long-running command stops cleanly and
// saves its state; stop releases the signal handler.
func signalContext(parent context.Context) (ctx context.Context, stop context.CancelFunc) {
	return signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
}

// orInterrupted is a command's result after work that ended with err under
// ctx: err if it is not nil, errInterrupted (exit status 130) if ctx was
// cancelled, nil otherwise.
func orInterrupted(ctx context.Context, err error) error {
	if err != nil {
		return err
	}
	if ctx.Err() != nil {
		return errInterrupted
	}
	return nil
}
