package training

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/shuffledp/shuffledp/data"
	"github.com/shuffledp/shuffledp/model"
	"github.com/shuffledp/shuffledp/protocol"
	"github.com/shuffledp/shuffledp/server"
)

// BatchSource is the server's side of a transport to a shuffler in another
// process (package node, over gRPC): Next publishes the server's model for
// the next round and returns the next batch the shuffler released, its
// privacy cost already debited to the shuffler's durable ledger. It returns
// an error wrapping ErrBudgetExhausted when the shuffler will release no
// more rounds because the budget is spent.
type BatchSource interface {
	Next(ctx context.Context, m protocol.Model) (protocol.Batch, error)
}

// WithRemote makes the trainer the server role of a networked run: no
// shuffler and no clients run in this process; every round publishes the
// model to src and applies the batch src returns (server.Receive). The
// trainer's ledger (WithLedger) then records the batches the server
// received — the same (run, round, event, digest) entries the shuffler's
// ledger debited before release, public values all — so that the metrics
// report epsilon exactly as `train` does. Training data is not needed
// (New's train may be nil): the clients' examples stay with the clients.
// Combine with WithSealing to open reports sealed with HPKE.
func WithRemote(src BatchSource) Option { return func(o *options) { o.remote = src } }

// WithSealing replaces the simulation's Plaintext sealing: the run's report
// length is the randomizer's report size plus s's overhead, and the server
// opens reports with op (a deployment: protocol.HPKESealer and
// protocol.HPKEOpener).
func WithSealing(s protocol.Sealer, op protocol.Opener) Option {
	return func(o *options) { o.sealer, o.opener = s, op }
}

// checkRemote checks a remote (server-only) trainer's configuration.
func checkRemote(cfg Config, m model.Model, test *data.Dataset) error {
	if cfg.Randomizer == RandomizerNone {
		return errors.New("randomizer none has no shuffler: a networked run needs a private randomizer")
	}
	if test != nil && (test.Dim != m.InputDim() || test.Classes > m.NumClasses()) {
		return fmt.Errorf("test data (dim %d, %d classes) does not fit model %s (dim %d, %d classes)",
			test.Dim, test.Classes, m.Name(), m.InputDim(), m.NumClasses())
	}
	return nil
}

// remoteRound is one round of a networked run on the server's side: the
// model goes to the shuffler, a released batch comes back; it is recorded in
// the server's ledger (idempotent for a batch the shuffler forwards again)
// and applied. The clients' losses never leave them, so the round's loss is
// NaN (train_loss is null in the metrics).
func (t *Trainer) remoteRound(ctx context.Context) (server.Step, float64, error) {
	b, err := t.remote.Next(ctx, t.server.Model())
	if err != nil {
		return server.Step{}, 0, err
	}
	if err := t.ledger.Debit(ctx, b.Round, t.cfg.roundEvent(len(b.Reports)), len(b.Reports), b.Digest()); err != nil {
		return server.Step{}, 0, fmt.Errorf("server ledger, round %d: %w", b.Round, err)
	}
	st, err := t.server.Receive(ctx, b)
	if err != nil {
		return server.Step{}, 0, err
	}
	return st, math.NaN(), nil
}
