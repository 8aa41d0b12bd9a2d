// Package training runs CLDP-SGD, Algorithm 1 of Girgis, Data, Diggavi,
// Suresh and Kairouz, "Renyi Differential Privacy of the Subsampled Shuffle
// Model in Distributed Learning" (NeurIPS 2021), in simulation: n clients
// hold one training example each; in every round k of them are sampled
// without replacement, each computes the gradient of the loss on its own
// example, clips it to the ball of radius C in an l_p norm and randomizes it
// with an eps0-LDP randomizer R_p; a shuffler permutes the k reports; the
// server averages them, takes an SGD step and (optionally) projects. The
// privacy ledger composes, once per round, the RDP curve of the subsampled
// shuffle mechanism (NeurIPS'21 Theorem 1 and every other valid upper
// bound, pointwise minimum) and reports (epsilon, delta).
//
// The round runs through the three roles of the shuffle model, wired in
// memory: package client (gradient, clip, randomize, seal), package
// shuffler's Service (sample, collect one report per sampled client,
// debit the budget, permute, forward report bytes) and package server
// (open, decode, average, step, project). The Trainer is their in-process
// transport: a pool of goroutines computes the sampled clients over fixed
// shards of the sample and submits their reports to the shuffler, which
// forwards the released batch to the server.
//
// The same roles also run DP-SGD with Gaussian clients, the learning
// experiments of the ICLR'23 submission "Shuffle Gaussian mechanism"
// (gaussian.go, noisesum.go): randomizer gaussian (each participating
// client adds N(0, C^2 sigma^2 I_d), accounted as the subsampled shuffle
// Gaussian mechanism), shuffled check-in (each client decides by its own
// coin; the check-in Gaussian mechanism), the central-DP baseline
// central-gaussian (the server adds the noise; the sampled Gaussian
// mechanism), and a summed-noise simulation of the Gaussian clients.
//
// Simulation only: every random choice (sampling, randomizer noise, the
// shuffler's permutation) comes from generators seeded by Config.Seed so a
// run is reproducible bit for bit and can be checkpointed and resumed. A
// deployment must draw client noise from crypto/rand (randomizer package).
package training

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shuffledp/shuffledp/accounting"
	"github.com/shuffledp/shuffledp/client"
	"github.com/shuffledp/shuffledp/data"
	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/ledger"
	"github.com/shuffledp/shuffledp/model"
	"github.com/shuffledp/shuffledp/protocol"
	"github.com/shuffledp/shuffledp/randomizer"
	"github.com/shuffledp/shuffledp/server"
	"github.com/shuffledp/shuffledp/shuffler"
)

// maxShards bounds the number of fixed shards a round's k clients are split
// into. Shard s always holds the same slots of the sampled list, and the
// partial sums are added in shard order, so the result is bitwise the same
// for any number of workers.
const maxShards = 32

// DefaultRunID is the run id of a Config without one.
const DefaultRunID = "train"

// Trainer holds the state of one CLDP-SGD run: the roles and their
// in-memory transport.
type Trainer struct {
	cfg   Config
	model model.Model
	train *data.Dataset // the clients' examples: client i holds example i
	test  *data.Dataset
	run   protocol.RunConfig

	server *server.Server
	shuf   *shuffler.Service // nil for the non-private baseline and with a remote shuffler
	remote BatchSource       // WithRemote's, or nil
	sim    *simRandomness
	ledger *ledger.Ledger        // the privacy ledger; nil for the non-private baseline
	best   *accounting.BestCurve // the per-round curve, for naming the winning bound
	extra  shuffler.Budget       // WithBudget's, or nil
	sealer protocol.Sealer

	workers []*clientWorker
	nShards int
	errs    []error     // per shard
	sampled []int       // non-private baseline: the round's sample
	shards  [][]float64 // non-private baseline: per-shard partial sums
	sum     []float64

	updates    int64         // client updates processed by this process (for throughput)
	gauss      gaussianState // the Gaussian runs' scratch (gaussian.go)
	avgScratch []float64     // EvaluateAveraged: the average and the saved parameters
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

// clientWorker is one goroutine's scratch: a client.Client (model worker,
// gradient buffer), a model.Worker for evaluation, and the noise source it
// rekeys for every client it computes. Randomness is per client (see
// clientKey), not per worker, so results do not depend on scheduling.
type clientWorker struct {
	c     *client.Client
	eval  model.Worker
	noise clientSource
}

// Option configures New.
type Option func(*options)

type options struct {
	budget   shuffler.Budget
	ledger   *ledger.Ledger
	receipts server.ReceiptLog
	remote   BatchSource
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
// starting point theta_0) on the clients' examples train (client i holds
// train example i, i < cfg.Clients) and the test set test (may be nil).
// cfg is validated (and its defaults filled in) first.
func New(cfg Config, m model.Model, train, test *data.Dataset, opts ...Option) (*Trainer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if o.remote != nil {
		if err := checkRemote(cfg, m, test); err != nil {
			return nil, err
		}
	} else if train == nil || train.N < cfg.Clients {
		have := 0
		if train != nil {
			have = train.N
		}
		return nil, fmt.Errorf("clients must be <= the number of training examples (%d), got %d", have, cfg.Clients)
	}
	if o.remote == nil && train.Dim != m.InputDim() {
		return nil, fmt.Errorf("model %s expects inputs of length %d, training data has %d", m.Name(), m.InputDim(), train.Dim)
	}
	if o.remote == nil && train.Classes > m.NumClasses() {
		return nil, fmt.Errorf("model %s has %d classes, training data has %d", m.Name(), m.NumClasses(), train.Classes)
	}
	if test != nil && (test.Dim != m.InputDim() || test.Classes > m.NumClasses()) {
		return nil, fmt.Errorf("test data (dim %d, %d classes) does not fit model %s (dim %d, %d classes)",
			test.Dim, test.Classes, m.Name(), m.InputDim(), m.NumClasses())
	}
	d := m.NumParams()
	t := &Trainer{
		cfg:    cfg,
		model:  m,
		train:  train,
		test:   test,
		sealer: protocol.Plaintext{}, // SIMULATION ONLY: all roles share this process
		extra:  o.budget,
		sum:    make([]float64, d),
		remote: o.remote,
	}
	if o.sealer != nil {
		t.sealer = o.sealer
	}
	t.run = protocol.RunConfig{
		Run: cfg.RunID, Model: m.Name(), Dim: d,
		Randomizer: cfg.Randomizer, ClipNorm: cfg.ClipNorm, Clip: cfg.Clip, ClampLinf: cfg.ClampLinf, Eps0: cfg.Eps0,
		Population: cfg.Clients, PerRound: cfg.Sample, MinBatch: cfg.Sample,
	}
	if t.run.Run == "" {
		t.run.Run = DefaultRunID
	}
	t.run = cfg.gaussianRun(t.run) // gaussian.go
	if t.run.Randomizer != RandomizerNone {
		r, err := protocol.NewRandomizer(t.run)
		if err != nil {
			return nil, err
		}
		t.run.ReportBytes = r.ReportSize() + t.sealer.Overhead()
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
		if !cfg.gaussian() { // the Gaussian runs' records name their event's bounds (gaussian.go)
			if t.best, err = accounting.Best(int64(cfg.Clients), int64(cfg.Sample), cfg.Eps0); err != nil {
				return nil, fmt.Errorf("privacy accounting: %w", err)
			}
		}
	}
	if t.sim, err = newSimRandomness(cfg); err != nil {
		return nil, err
	}
	var opener protocol.Opener
	if cfg.Randomizer != RandomizerNone {
		opener = protocol.Plaintext{}
		if o.opener != nil {
			opener = o.opener
		}
	}
	t.gauss.noise = &roundNoise{}
	t.server, err = server.New(server.Config{Run: t.run, LR: cfg.Schedule(), ProjectRadius: cfg.ProjectRadius,
		Optimizer: cfg.Optimizer, EMA: cfg.EMA, Opener: opener, Receipts: o.receipts, Noise: t.gauss.noise}, m)
	if err != nil {
		return nil, err
	}
	if err := t.newShuffler(0); err != nil {
		return nil, err
	}
	for range cfg.Workers {
		// The clients share the server's model object: the round's
		// published parameters are the server's own vector, which no
		// client writes and the server changes only between rounds.
		c, err := client.New(t.clientRun(), m, t.sealer)
		if err != nil {
			return nil, err
		}
		w := &clientWorker{c: c, eval: m.NewWorker()}
		if cfg.CryptoNoise {
			w.noise.crypto = randomizer.NewCryptoSource()
		}
		t.workers = append(t.workers, w)
	}
	t.nShards = min(maxShards, cfg.Sample)
	t.errs = make([]error, t.nShards)
	if cfg.Randomizer == RandomizerNone || cfg.dense() { // dense paths: per-shard partial sums
		t.sampled = make([]int, cfg.Sample)
		t.shards = make([][]float64, t.nShards)
		for i := range t.shards {
			t.shards[i] = make([]float64, d)
		}
	}
	return t, nil
}

// newShuffler (re)creates the shuffler role, its round ids continuing
// after lastRound.
func (t *Trainer) newShuffler(lastRound int64) error {
	if t.cfg.Randomizer == RandomizerNone || t.remote != nil || t.cfg.dense() {
		return nil
	}
	var budget shuffler.Budget = &shuffler.LedgerBudget{
		Ledger: t.ledger,
		Event:  func(reports int) event.Event { return t.cfg.roundEvent(reports) },
		Replay: !t.cfg.CryptoNoise,
	}
	if t.extra != nil {
		budget = chainBudget{t.extra, budget}
	}
	var err error
	t.shuf, err = shuffler.NewService(shuffler.ServiceConfig{Run: t.run, Budget: budget, Randomness: t.sim, LastRound: lastRound})
	return err
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

// shardRange returns the slots [lo, hi) of shard s out of nShards over k
// sampled clients.
func shardRange(s, nShards, k int) (lo, hi int) {
	return s * k / nShards, (s + 1) * k / nShards
}

// Step runs one round of Algorithm 1 (lines 3–11); its privacy cost is
// debited before the batch reaches the server. It returns an error, and
// changes nothing, if a target epsilon is set and the round would exceed
// it (ErrBudgetExhausted).
func (t *Trainer) Step() (RoundStats, error) { return t.StepContext(context.Background()) }

// StepContext is Step with a context for the roles' calls.
func (t *Trainer) StepContext(ctx context.Context) (RoundStats, error) {
	start := time.Now()
	var (
		st   server.Step
		loss float64
		err  error
	)
	switch {
	case t.remote != nil:
		st, loss, err = t.remoteRound(ctx)
	case t.cfg.dense(): // gaussian.go
		st, loss, err = t.noisyRound(ctx)
	case t.cfg.checkIn():
		st, loss, err = t.checkInRound(ctx)
	case t.shuf == nil:
		st, loss, err = t.denseRound()
	default:
		st, loss, err = t.privateRound(ctx)
	}
	if err != nil {
		return RoundStats{}, err
	}
	t.updates += int64(st.Reports)
	t.gauss.reports += int64(st.Reports)
	t.gauss.rounds++
	return RoundStats{Round: int(st.Step), Epoch: st.Epoch, LR: st.LR, Loss: loss / float64(max(st.Reports, 1)), Duration: time.Since(start),
		Reports: st.Reports, Refused: st.Refused}, nil
}

func (t *Trainer) example(i int) client.Example {
	return client.Example{X: t.train.Example(i), Label: t.train.Y[i]}
}

// privateRound runs one round through the roles: the server publishes its
// model; the shuffler opens a round (budget check, sample: line 3) and
// relays the model to the sampled clients; each computes, clips,
// randomizes and seals its report (lines 4–8) and submits it; the
// shuffler debits the budget, permutes (line 9) and forwards the batch;
// the server decodes, averages and steps (lines 10–11).
func (t *Trainer) privateRound(ctx context.Context) (server.Step, float64, error) {
	round, err := t.shuf.Open(ctx, t.server.Model())
	if err != nil {
		return server.Step{}, 0, err
	}
	sampled, roundKey, k := t.shuf.Sampled(), t.sim.roundKey, t.cfg.Sample
	loss := t.parallelShards(t.nShards, func(w *clientWorker, s int) float64 {
		lo, hi := shardRange(s, t.nShards, k)
		var l float64
		t.errs[s] = nil
		for slot := lo; slot < hi; slot++ {
			c := sampled[slot]
			w.noise.reset(t.cfg.Seed, roundKey, uint64(slot))
			cl, err := t.report(w, &round, c, w.noise.stream())
			l += cl
			if err != nil {
				t.errs[s] = fmt.Errorf("client in slot %d: %w", slot, err)
				return l
			}
		}
		return l
	})
	st, err := t.release(ctx)
	if cerr := errors.Join(t.errs...); cerr != nil {
		return server.Step{}, 0, cerr // the round was discarded as incomplete
	}
	if err != nil {
		return server.Step{}, 0, err
	}
	return st, loss, nil
}

// report has client c, played by worker w, compute, clip, randomize and
// seal its report of round with noise and submit it to the shuffler; it
// returns the client's training loss.
func (t *Trainer) report(w *clientWorker, round *protocol.Round, c int, noise randomizer.Source) (float64, error) {
	sealed, loss, err := w.c.Report(round, t.example(c), noise)
	if err == nil {
		err = t.shuf.Submit(c, round.ID, sealed)
	}
	return loss, err
}

// release has the shuffler debit and release the round's batch to the
// server, which decodes, averages and steps.
func (t *Trainer) release(ctx context.Context) (server.Step, error) {
	var st server.Step
	_, err := t.shuf.Release(ctx, func(ctx context.Context, b protocol.Batch) error {
		var err error
		st, err = t.server.Receive(ctx, b)
		return err
	})
	return st, err
}

// denseRound is the non-private baseline (randomizer none): no randomizer,
// no shuffler, no privacy claim. The sample comes from the same seeded
// generator; the clipped gradients are summed in the clear over fixed
// shards (added in shard order) and the server steps on the sum.
func (t *Trainer) denseRound() (server.Step, float64, error) {
	if _, err := t.sim.Round(t.sampled); err != nil {
		return server.Step{}, 0, err
	}
	round := protocol.Round{ID: t.server.Steps() + 1, Model: t.server.Model()}
	k := t.cfg.Sample
	loss := t.parallelShards(t.nShards, func(w *clientWorker, s int) float64 {
		lo, hi := shardRange(s, t.nShards, k)
		sum := t.shards[s]
		clear(sum)
		var l float64
		t.errs[s] = nil
		for slot := lo; slot < hi; slot++ {
			g, cl, err := w.c.ClippedGradient(&round, t.example(t.sampled[slot]))
			if err != nil {
				t.errs[s] = fmt.Errorf("client in slot %d: %w", slot, err)
				return l
			}
			l += cl
			for i, v := range g {
				sum[i] += v
			}
		}
		return l
	})
	if err := errors.Join(t.errs...); err != nil {
		return server.Step{}, 0, err
	}
	copy(t.sum, t.shards[0])
	for _, sh := range t.shards[1:] {
		for i, v := range sh {
			t.sum[i] += v
		}
	}
	st, err := t.server.ApplySum(t.sum, k)
	return st, loss, err
}

// parallelShards runs f on every shard, each worker taking the next shard
// from a shared counter, and returns the sum of f's results in shard order.
func (t *Trainer) parallelShards(nShards int, f func(w *clientWorker, s int) float64) float64 {
	results := make([]float64, nShards)
	var next atomic.Int64
	var wg sync.WaitGroup
	for _, w := range t.workers[:min(len(t.workers), nShards)] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				s := int(next.Add(1) - 1)
				if s >= nShards {
					return
				}
				results[s] = f(w, s)
			}
		}()
	}
	wg.Wait()
	var total float64
	for _, r := range results {
		total += r
	}
	return total
}
