package training

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/shuffledp/shuffledp/data"
	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/ledger"
	"github.com/shuffledp/shuffledp/model"
	"github.com/shuffledp/shuffledp/protocol"
)

// Transport is where the training loop gets each round from: Next is given
// the model the server publishes for the next round (protocol.Model: run,
// version = the steps taken so far, parameters) and returns the round's
// release, the shuffled batch of reports computed at that model, its
// privacy cost already debited to the ledger. It returns an error wrapping
// ErrBudgetExhausted when the budget will release no more rounds; an error
// leaves the server's model unchanged.
//
// The in-process simulation (New without WithRemote) and a networked
// deployment (WithRemote over a BatchSource) are the two transports.
type Transport interface {
	Next(ctx context.Context, m protocol.Model) (Release, error)
}

// Release is one round's release as the server receives it, and its public
// metadata.
type Release struct {
	// Batch is the batch the shuffler released: run, round id and the
	// sealed reports in a uniformly random order.
	Batch protocol.Batch
	// Loss is the sum of the participating clients' training losses at the
	// published model: a simulation diagnostic (NaN in a deployment, where
	// it never leaves the clients).
	Loss float64
	// dense replaces Batch on the simulation's dense paths, where no
	// report exists (noisesum.go, denseRound).
	dense *denseRelease
}

// BatchSource is the server's side of a transport to a shuffler in another
// process (package node, over gRPC): Next publishes the server's model for
// the next round and returns the next batch the shuffler released, its
// privacy cost already debited to the shuffler's durable ledger. It returns
// an error wrapping ErrBudgetExhausted (ledger.ErrBudgetExhausted) when the
// shuffler will release no more rounds because the budget is spent. Its
// types are package protocol's, so a network node implements it without
// importing this package.
type BatchSource interface {
	Next(ctx context.Context, m protocol.Model) (protocol.Batch, error)
}

// BatchEventer is an optional interface of a BatchSource whose batches are
// not one subsampled shuffle of the run's configuration: BatchEvent returns
// the privacy event the server's ledger records for b. A sharded run's
// batch (the shards' batches of a round, node.Server with shards) is
// recorded as one shard's round, since a client's guarantee is its own
// shard's (docs/proofs/shards.md); recording it as a round of all n would
// understate every client's epsilon.
type BatchEventer interface {
	BatchEvent(b protocol.Batch) event.Event
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
// protocol.HPKEOpener) on every core (server.Config.OpenWorkers =
// GOMAXPROCS), so op must be safe for concurrent use.
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

// remote is the Transport of a networked run's server: the model goes to
// the shuffler, a released batch comes back; it is recorded in the server's
// ledger (idempotent for a batch the shuffler forwards again) before the
// server applies it. The clients' losses never leave them, so the round's
// loss is NaN (train_loss is null in the metrics).
type remote struct {
	src    BatchSource
	ledger *ledger.Ledger
	cfg    *Config
}

// Next implements Transport.
func (r *remote) Next(ctx context.Context, m protocol.Model) (Release, error) {
	b, err := r.src.Next(ctx, m)
	if err != nil {
		return Release{}, err
	}
	ev := r.cfg.roundEvent(len(b.Reports))
	if be, ok := r.src.(BatchEventer); ok {
		ev = be.BatchEvent(b)
	}
	if err := r.ledger.Debit(ctx, b.Round, ev, len(b.Reports), b.Digest()); err != nil {
		return Release{}, fmt.Errorf("server ledger, round %d: %w", b.Round, err)
	}
	return Release{Batch: b, Loss: math.NaN()}, nil
}

// shufflerState implements transportState. A networked server runs no
// shuffler: its checkpoint holds the simulation generator's initial state
// for the seed (never drawn from) and no round id, as before the loop was
// split from its transports, so that the checkpoint format is one.
func (r *remote) shufflerState() (shufflerState, error) {
	rng, err := newSimGenerator(r.cfg.Seed).MarshalBinary()
	return shufflerState{RNG: rng}, err
}

// restoreShuffler implements transportState: a networked server has no
// shuffler state to restore; the generator's state is only checked.
func (r *remote) restoreShuffler(st shufflerState) error {
	if err := newSimGenerator(r.cfg.Seed).UnmarshalBinary(st.RNG); err != nil {
		return fmt.Errorf("generator state: %w", err)
	}
	return nil
}

// CheckNetworked refuses a configuration that cannot run over the network,
// naming the flag: the non-private baseline (no shuffler), central-gaussian
// (its clients send their clipped gradients unnoised and the untrusted
// server adds the noise, so the server would see every raw gradient) and
// the summed-noise simulation (one noise vector for all the clients).
func (c *Config) CheckNetworked() error {
	switch c.Randomizer {
	case RandomizerNone:
		return errors.New("randomizer none has no shuffler: a networked run needs a private randomizer")
	case RandomizerRInf, RandomizerR1, RandomizerR2, RandomizerPrivUnit, RandomizerDJW, RandomizerGaussian:
	case RandomizerCentralGaussian:
		return errors.New("randomizer central-gaussian: not over the network: its clients send their clipped gradients unnoised and the untrusted server adds the noise, so the server would see every raw gradient (use randomizer gaussian: each client adds its own noise)")
	default:
		return fmt.Errorf("randomizer %s: a networked run supports the eps0-LDP randomizers rinf, r1, r2, privunit and djw, and gaussian", c.Randomizer)
	}
	if c.NoiseSum {
		return errors.New("noise-sum: a simulation shortcut (one summed noise vector); networked clients add their own noise")
	}
	if c.ClipDiagnostic {
		return errors.New("clip-diagnostic: a simulation-only diagnostic (it reads every client's clear gradient); a networked server never sees one")
	}
	return nil
}

// ReportSize is the size in bytes of one randomized report of the run on a
// model of dim parameters, before sealing (a sealer pads to it).
func (c *Config) ReportSize(dim int) (int, error) {
	r, err := protocol.NewRandomizer(protocol.RunConfig{Randomizer: c.Randomizer, Eps0: c.Eps0, Dim: dim, Clip: c.Clip, Sigma: c.Sigma})
	if err != nil {
		return 0, err
	}
	return r.ReportSize(), nil
}

// ShufflerAdjacency is the --adjacency a shuffler started for this run
// (by `shuffledp up`) is given: the run's own relation for a Gaussian run,
// so that the shuffler accepts the run it is started for and a zero-out
// run is zero-out on both sides; otherwise "" (the shuffler's default).
func (c Config) ShufflerAdjacency() string {
	if c.Randomizer == RandomizerGaussian {
		return c.Adjacency
	}
	return ""
}
