package training

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

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

// simulation is the in-process Transport: the clients (package client)
// and the shuffler (shuffler.Service) of the shuffle model, wired in
// memory. For every round it opens the shuffler's round at the published
// model (budget check, sample), has a pool of goroutines compute the
// sampled clients' reports over fixed shards of the sample, and has the
// shuffler debit the ledger and release the permuted batch, which it
// returns to the loop. Randomness is seeded (randomness.go; SIMULATION
// ONLY).
//
// Its dense paths (the non-private baseline, central-gaussian and the
// summed-noise simulation: noisesum.go) have no reports: they return a sum
// for the server to step on instead of a batch. For central-gaussian the
// server is the trusted curator that adds the noise, so the simulation
// holds it as curator: it has the server add the noise
// (server.PrepareCentralGaussian) before the ledger is debited and the loop
// applies the step.
type simulation struct {
	cfg   Config
	run   protocol.RunConfig
	train *data.Dataset // the clients' examples, dealt by assignment
	// assignment says which examples of train each client holds (the
	// run's partition; client i holds example i by default).
	assignment data.Assignment
	sealer     protocol.Sealer
	ledger     *ledger.Ledger  // debited before every release; nil for the non-private baseline
	extra      shuffler.Budget // WithBudget's, or nil
	curator    *server.Server  // central-gaussian only: the server adds the noise
	noise      *roundNoise     // the curator's noise source, set every round

	shuf *shuffler.Service // nil for the non-private baseline and on the dense paths
	sim  *simRandomness

	workers []*clientWorker
	nShards int
	errs    []error     // per shard
	sampled []int       // non-private baseline: the round's sample
	shards  [][]float64 // dense paths: per-shard partial sums
	sum     []float64

	members      []int // the round's participants (dense paths)
	shardMembers [][]int
}

// simConfig is what newSimulation needs from New.
type simConfig struct {
	cfg     Config
	run     protocol.RunConfig
	model   model.Model
	train   *data.Dataset
	sealer  protocol.Sealer
	ledger  *ledger.Ledger
	extra   shuffler.Budget
	curator *server.Server
	noise   *roundNoise
}

// clientWorker is one goroutine's scratch: a client.Client (model worker,
// gradient buffer) and the noise source it rekeys for every client it
// computes. Randomness is per client (see
// clientKey), not per worker, so results do not depend on scheduling.
type clientWorker struct {
	c     *client.Client
	noise clientSource
	data  clientData // the examples of the client it computes (clientdata.go)
}

func newSimulation(sc simConfig) (*simulation, error) {
	cfg, d := sc.cfg, sc.model.NumParams()
	t := &simulation{cfg: cfg, run: sc.run, train: sc.train, sealer: sc.sealer, ledger: sc.ledger, extra: sc.extra,
		curator: sc.curator, noise: sc.noise, sum: make([]float64, d)}
	var err error
	if t.assignment, err = cfg.assign(sc.train); err != nil {
		return nil, err
	}
	if t.sim, err = newSimRandomness(cfg); err != nil {
		return nil, err
	}
	if err := t.newShuffler(0); err != nil {
		return nil, err
	}
	for range cfg.Workers {
		// The clients share the server's model object: the round's
		// published parameters are the server's own vector, which no
		// client writes and the server changes only between rounds.
		c, err := client.New(t.clientRun(), sc.model, t.sealer)
		if err != nil {
			return nil, err
		}
		w := &clientWorker{c: c}
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
func (t *simulation) newShuffler(lastRound int64) error {
	if t.cfg.Randomizer == RandomizerNone || t.cfg.dense() {
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

// Next implements Transport: one round of the run's kind, at the model m.
func (t *simulation) Next(ctx context.Context, m protocol.Model) (Release, error) {
	switch {
	case t.cfg.dense(): // noisesum.go
		return t.noisyRound(ctx, m)
	case t.cfg.checkIn():
		return t.checkInRound(ctx, m)
	case t.shuf == nil:
		return t.denseRound(m)
	default:
		return t.privateRound(ctx, m)
	}
}

// shufflerState implements transportState: the run's generator and the
// shuffler's last round id.
func (t *simulation) shufflerState() (shufflerState, error) {
	rng, err := t.sim.master.MarshalBinary()
	if err != nil {
		return shufflerState{}, err
	}
	var last int64
	if t.shuf != nil {
		last = t.shuf.LastRound()
	}
	return shufflerState{RNG: rng, LastRound: last}, nil
}

// restoreShuffler implements transportState: the generator's state, and a
// shuffler whose round ids continue after the checkpoint's.
func (t *simulation) restoreShuffler(st shufflerState) error {
	if err := t.sim.master.UnmarshalBinary(st.RNG); err != nil {
		return fmt.Errorf("generator state: %w", err)
	}
	return t.newShuffler(st.LastRound)
}

// shardRange returns the slots [lo, hi) of shard s out of nShards over k
// sampled clients.
func shardRange(s, nShards, k int) (lo, hi int) {
	return s * k / nShards, (s + 1) * k / nShards
}

// privateRound runs one round through the roles at the server's published
// model m: the shuffler opens a round (budget check, sample: line 3) and
// relays the model to the sampled clients; each computes, clips,
// randomizes and seals its report (lines 4–8) and submits it; the
// shuffler debits the budget, permutes (line 9) and releases the batch,
// which the loop hands to the server (lines 10–11).
func (t *simulation) privateRound(ctx context.Context, m protocol.Model) (Release, error) {
	round, err := t.shuf.Open(ctx, m)
	if err != nil {
		return Release{}, err
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
	b, err := t.release(ctx)
	if cerr := errors.Join(t.errs...); cerr != nil {
		return Release{}, cerr // the round was discarded as incomplete
	}
	if err != nil {
		return Release{}, err
	}
	return Release{Batch: b, Loss: loss}, nil
}

// report has client c, played by worker w, compute, clip, randomize and
// seal its report of round with noise and submit it to the shuffler; it
// returns the client's training loss.
func (t *simulation) report(w *clientWorker, round *protocol.Round, c int, noise randomizer.Source) (float64, error) {
	sealed, loss, err := w.c.ReportExamples(round, t.clientExamples(w, c), noise)
	if err == nil {
		err = t.shuf.Submit(c, round.ID, sealed)
	}
	return loss, err
}

// release has the shuffler debit the ledger and release the round's
// batch (fresh memory, in the permuted order), which it returns.
func (t *simulation) release(ctx context.Context) (protocol.Batch, error) {
	var out protocol.Batch
	_, err := t.shuf.Release(ctx, func(_ context.Context, b protocol.Batch) error {
		out = b
		return nil
	})
	return out, err
}

// denseRound is the non-private baseline (randomizer none): no randomizer,
// no shuffler, no privacy claim. The sample comes from the same seeded
// generator; the clipped gradients are summed in the clear over fixed
// shards (added in shard order) and the server steps on the sum.
func (t *simulation) denseRound(m protocol.Model) (Release, error) {
	if _, err := t.sim.Round(t.sampled); err != nil {
		return Release{}, err
	}
	round := protocol.Round{ID: m.Version + 1, Model: m}
	k := t.cfg.Sample
	loss := t.parallelShards(t.nShards, func(w *clientWorker, s int) float64 {
		lo, hi := shardRange(s, t.nShards, k)
		sum := t.shards[s]
		clear(sum)
		var l float64
		t.errs[s] = nil
		for slot := lo; slot < hi; slot++ {
			g, cl, err := w.c.ClippedExamples(&round, t.clientExamples(w, t.sampled[slot]))
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
		return Release{}, err
	}
	copy(t.sum, t.shards[0])
	for _, sh := range t.shards[1:] {
		for i, v := range sh {
			t.sum[i] += v
		}
	}
	return Release{Loss: loss, dense: &denseRelease{kind: clearSum, sum: t.sum, reports: k}}, nil
}

// parallelShards runs f on every shard, each worker taking the next shard
// from a shared counter, and returns the sum of f's results in shard order.
func (t *simulation) parallelShards(nShards int, f func(w *clientWorker, s int) float64) float64 {
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
