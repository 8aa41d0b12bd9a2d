// Package training is the training loop of CLDP-SGD, Algorithm 1 of
// Girgis, Data, Diggavi, Suresh and Kairouz, "Renyi Differential Privacy of
// the Subsampled Shuffle Model in Distributed Learning" (NeurIPS 2021), and
// its in-process simulation.
//
// The loop (Trainer: Run, Step) is the server's side of the shuffle model:
// every round the server (package server) publishes its model, a Transport
// returns the batch the shuffler released for that round — its privacy cost
// already debited to the ledger — and the server opens, decodes, averages,
// steps and projects; the loop evaluates, reports (epsilon, delta) from the
// ledger (NeurIPS'21 Theorem 1 and every other valid upper bound, pointwise
// minimum, composed once per round) and stops at the last round, at the
// target epsilon or on cancellation. It is the same loop in both places a
// round can come from:
//
//   - the simulation (the default transport of New): n clients hold one
//     training example each; in every round k of them are sampled without
//     replacement, each computes the gradient of the loss on its own
//     example, clips it to the ball of radius C in an l_p norm and
//     randomizes it with an eps0-LDP randomizer R_p (package client), and
//     package shuffler's Service collects one report per sampled client,
//     debits the budget and permutes; a pool of goroutines computes the
//     sampled clients over fixed shards of the sample. Every random choice
//     (sampling, randomizer noise, the shuffler's permutation) comes from
//     generators seeded by Config.Seed, so a run is reproducible bit for bit
//     and can be checkpointed and resumed (SIMULATION ONLY: a deployment
//     draws from crypto/rand);
//   - a networked deployment (WithRemote): the shuffler and the clients are
//     other processes, and the transport is a BatchSource over gRPC
//     (package node), which this package does not import.
//
// The same loop also runs DP-SGD with Gaussian clients, the learning
// experiments of the ICLR'23 submission "Shuffle Gaussian mechanism"
// (gaussian.go, noisesum.go): randomizer gaussian (each participating
// client adds N(0, C^2 sigma^2 I_d), accounted as the subsampled shuffle
// Gaussian mechanism), shuffled check-in (each client decides by its own
// coin; the check-in Gaussian mechanism), the central-DP baseline
// central-gaussian (the server adds the noise; the sampled Gaussian
// mechanism), and a summed-noise simulation of the Gaussian clients.
//
// Session keeps a run in a state directory (package statedir): durable
// ledger, checkpoint, metrics (package metrics), receipt log, lock.
package training

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/shuffledp/shuffledp/data"
	"github.com/shuffledp/shuffledp/ledger"
	"github.com/shuffledp/shuffledp/model"
	"github.com/shuffledp/shuffledp/protocol"
	"github.com/shuffledp/shuffledp/server"
	"github.com/shuffledp/shuffledp/shuffler"
)

// DefaultRunID is the run id of a Config without one.
const DefaultRunID = "train"

// Trainer is the training loop of one run: the server role, the privacy
// ledger it reports epsilon from, the evaluation, and the Transport its
// rounds come from.
type Trainer struct {
	cfg   Config
	model model.Model
	test  *data.Dataset
	train *data.Dataset // the clients' examples, kept for Config.ClipDiagnostic only (simulation)
	run   protocol.RunConfig

	server    *server.Server
	transport Transport
	ledger    *ledger.Ledger // the privacy ledger; nil for the non-private baseline

	eval       []model.Worker // evaluation scratch, one per worker
	evaluate   Evaluator      // WithEvaluator's (nil: the model's workers on the test set)
	updates    int64          // client updates processed by this process (for throughput)
	batches    batchStats     // the Gaussian runs' batch sizes since the last evaluation (gaussian.go)
	avgScratch []float64      // EvaluateAveraged: the average and the saved parameters
}

// RoundStats describes one completed round.
type RoundStats struct {
	// Round is the number of rounds completed (model steps taken),
	// counting this one.
	Round int
	// Epoch is the epoch (from 0) the round belonged to.
	Epoch int
	// LR is the learning rate used.
	LR float64
	// Loss is the mean training loss of the k sampled clients' examples at
	// the parameters before the step (a simulation diagnostic: it never
	// leaves the clients in a deployment).
	Loss float64
	// Duration is the wall time of the round.
	Duration time.Duration
	// Reports is the number of reports averaged; Refused the number the
	// server left out because they did not open or decode
	// (server.Step.Refused).
	Reports, Refused int
}

// Option configures New.
type Option func(*options)

type options struct {
	budget   shuffler.Budget
	ledger   *ledger.Ledger
	receipts server.ReceiptLog
	remote   BatchSource
	update   server.Update
	evaluate Evaluator
	sealer   protocol.Sealer
	opener   protocol.Opener
}

// WithLedger makes l the run's privacy ledger: the shuffler debits every
// round's event to it before it releases the batch, a round it refuses
// (the target reached) is discarded, and the metrics report its epsilon.
// l's run id must be cfg.RunID. Without it, New opens a ledger over a
// ledger.MemoryStore: the budget is then enforced within this process but
// not durable (a throwaway simulation; `train --state` passes a SQLite
// one).
func WithLedger(l *ledger.Ledger) Option { return func(o *options) { o.ledger = l } }

// WithBudget makes the shuffler debit b as well, before the ledger (a hook
// for tests and for budgets kept elsewhere); an error from b discards the
// round before the ledger sees it.
func WithBudget(b shuffler.Budget) Option { return func(o *options) { o.budget = b } }

// WithReceipts makes the server record every batch it receives in l.
func WithReceipts(l server.ReceiptLog) Option { return func(o *options) { o.receipts = l } }

// New returns a trainer for the model m (whose current parameters are the
// starting point theta_0) on the clients' examples train (the first
// cfg.Clients*cfg.ExamplesPerClient examples, dealt by cfg.Partition: by
// default client i holds example i) and the test set test (may be nil).
// cfg is validated (and its defaults filled in) first. Its rounds come from
// the in-process simulation, or from WithRemote's source.
func New(cfg Config, m model.Model, train, test *data.Dataset, opts ...Option) (*Trainer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if err := checkExternal(o, m); err != nil {
		return nil, err
	}
	if o.remote != nil {
		if err := checkRemote(cfg, m, test); err != nil {
			return nil, err
		}
	} else if err := checkTrainData(cfg, m, train); err != nil {
		return nil, err
	}
	if test != nil && (test.Dim != m.InputDim() || test.Classes > m.NumClasses()) {
		return nil, fmt.Errorf("test data (dim %d, %d classes) does not fit model %s (dim %d, %d classes)",
			test.Dim, test.Classes, m.Name(), m.InputDim(), m.NumClasses())
	}
	t := &Trainer{cfg: cfg, model: m, test: test, evaluate: o.evaluate}
	var sealer protocol.Sealer = protocol.Plaintext{} // SIMULATION ONLY: all roles share this process
	if o.sealer != nil {
		sealer = o.sealer
	}
	t.run = protocol.RunConfig{
		Run: cfg.RunID, Model: m.Name(), Dim: m.NumParams(),
		Randomizer: cfg.Randomizer, ClipNorm: cfg.ClipNorm, Clip: cfg.Clip, ClampLinf: cfg.ClampLinf, Eps0: cfg.Eps0,
		Population: cfg.Clients, PerRound: cfg.Sample, MinBatch: cfg.Sample,
	}
	if t.run.Run == "" {
		t.run.Run = DefaultRunID
	}
	t.run = cfg.gaussianRun(t.run) // gaussian.go
	t.run = cfg.localRun(t.run)    // clientdata.go
	if t.run.Randomizer != RandomizerNone {
		r, err := protocol.NewRandomizer(t.run)
		if err != nil {
			return nil, err
		}
		t.run.ReportBytes = r.ReportSize() + sealer.Overhead()
	}
	var err error
	if cfg.Randomizer != RandomizerNone {
		if t.ledger = o.ledger; t.ledger == nil {
			if t.ledger, err = OpenMemoryLedger(cfg, t.run.Run); err != nil {
				return nil, err
			}
		} else if t.ledger.Run() != t.run.Run {
			return nil, fmt.Errorf("ledger of run %q given to run %q", t.ledger.Run(), t.run.Run)
		}
	}
	var opener protocol.Opener
	openWorkers := 1
	if cfg.Randomizer != RandomizerNone {
		opener = protocol.Plaintext{}
		if o.opener != nil {
			// A real opener (HPKE) costs tens of microseconds a report:
			// the server opens a batch on every core (WithSealing's
			// opener is safe for concurrent use).
			opener, openWorkers = o.opener, runtime.GOMAXPROCS(0)
		}
	}
	noise := &roundNoise{} // the central baseline's server noise, set by the simulation every round
	t.server, err = server.New(server.Config{Run: t.run, LR: cfg.Schedule(), ProjectRadius: cfg.ProjectRadius,
		Optimizer: cfg.Optimizer, EMA: cfg.EMA, Opener: opener, OpenWorkers: openWorkers, Receipts: o.receipts, Noise: noise, Update: o.update}, m)
	if err != nil {
		return nil, err
	}
	if o.remote != nil {
		t.transport = &remote{src: o.remote, ledger: t.ledger, cfg: &t.cfg}
	} else {
		if cfg.ClipDiagnostic {
			t.train = train
		}
		if t.transport, err = newSimulation(simConfig{cfg: cfg, run: t.run, model: m, train: train, sealer: sealer,
			ledger: t.ledger, extra: o.budget, curator: t.server, noise: noise}); err != nil {
			return nil, err
		}
	}
	for range cfg.Workers {
		t.eval = append(t.eval, m.NewWorker())
	}
	return t, nil
}

// checkTrainData checks that the clients' examples fit the run and the model.
func checkTrainData(cfg Config, m model.Model, train *data.Dataset) error {
	if train == nil || train.N < cfg.Population() {
		have := 0
		if train != nil {
			have = train.N
		}
		if cfg.ExamplesPerClient > 1 {
			return fmt.Errorf("clients * examples-per-client must be <= the number of training examples (%d), got %d * %d = %d", have, cfg.Clients, cfg.ExamplesPerClient, cfg.Population())
		}
		return fmt.Errorf("clients must be <= the number of training examples (%d), got %d", have, cfg.Clients)
	}
	if train.Dim != m.InputDim() {
		return fmt.Errorf("model %s expects inputs of length %d, training data has %d", m.Name(), m.InputDim(), train.Dim)
	}
	if train.Classes > m.NumClasses() {
		return fmt.Errorf("model %s has %d classes, training data has %d", m.Name(), m.NumClasses(), train.Classes)
	}
	return nil
}

// Config returns the (validated) configuration.
func (t *Trainer) Config() Config { return t.cfg }

// RunConfig returns the run's public configuration, as the roles see it.
func (t *Trainer) RunConfig() protocol.RunConfig { return t.run }

// Model returns the model being trained.
func (t *Trainer) Model() model.Model { return t.model }

// Round returns the number of rounds completed (the server's model steps).
func (t *Trainer) Round() int { return int(t.server.Steps()) }

// Ledger returns the privacy ledger (nil for the non-private baseline).
func (t *Trainer) Ledger() *ledger.Ledger { return t.ledger }

// Step runs one round of Algorithm 1 (lines 3–11); its privacy cost is
// debited before the batch reaches the server. It returns an error, and
// changes nothing, if a target epsilon is set and the round would exceed
// it (ErrBudgetExhausted).
func (t *Trainer) Step() (RoundStats, error) { return t.StepContext(context.Background()) }

// StepContext is Step with a context for the roles' calls: the server
// publishes its model, the transport returns the round's release, the
// server applies it.
func (t *Trainer) StepContext(ctx context.Context) (RoundStats, error) {
	start := time.Now()
	rel, err := t.transport.Next(ctx, t.server.Model())
	if err != nil {
		return RoundStats{}, err
	}
	st, err := t.apply(ctx, rel)
	if err != nil {
		return RoundStats{}, err
	}
	t.updates += int64(st.Reports)
	t.batches.reports += int64(st.Reports)
	t.batches.rounds++
	return RoundStats{Round: int(st.Step), Epoch: st.Epoch, LR: st.LR, Loss: rel.Loss / float64(max(st.Reports, 1)), Duration: time.Since(start),
		Reports: st.Reports, Refused: st.Refused}, nil
}

// apply has the server step on a round's release: it opens, decodes and
// averages a batch of reports (server.Receive), or steps on a dense
// simulation path's sum.
func (t *Trainer) apply(ctx context.Context, rel Release) (server.Step, error) {
	if rel.dense != nil {
		return rel.dense.apply(t.server)
	}
	return t.server.Receive(ctx, rel.Batch)
}
