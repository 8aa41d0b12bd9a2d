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
// Simulation only: every random choice (sampling, randomizer noise, the
// shuffler's permutation) comes from generators seeded by Config.Seed so a
// run is reproducible bit for bit and can be checkpointed and resumed. A
// deployment must draw client noise from crypto/rand (randomizer package).
package training

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shuffledp/shuffledp/data"
	"github.com/shuffledp/shuffledp/model"
	"github.com/shuffledp/shuffledp/randomizer"
	"github.com/shuffledp/shuffledp/shuffler"
)

// maxShards bounds the number of fixed shards a round's k clients are split
// into. Shard s always holds the same slots of the sampled list, and the
// partial sums are added in shard order, so the result is bitwise the same
// for any number of workers.
const maxShards = 32

// Trainer holds the state of one CLDP-SGD run.
type Trainer struct {
	cfg   Config
	model model.Model
	train *data.Dataset // the clients' examples: client i holds example i
	test  *data.Dataset
	mech  *mechanism

	round  int       // rounds completed
	master *rand.PCG // the run's sequential generator; its state is checkpointed
	rng    *rand.Rand
	ledger *Ledger

	sampler *ClientSampler
	sampled []int
	workers []*clientWorker
	shards  [][]float64 // per-shard partial sums (dense path)
	sum     []float64
	reports *reportBatch // randomized path
	shuf    *shuffler.Shuffler
	shufSrc *clientSource

	updates int64 // client updates processed by this process (for throughput)
}

// RoundStats describes one completed round.
type RoundStats struct {
	// Round is the number of rounds completed, counting this one.
	Round int
	// Epoch is the epoch (from 0) the round belonged to.
	Epoch int
	// LR is the learning rate used.
	LR float64
	// Loss is the mean training loss of the k sampled clients' examples at
	// the parameters before the step.
	Loss float64
	// Duration is the wall time of the round.
	Duration time.Duration
}

// clientWorker is one goroutine's scratch: its own model.Worker and
// gradient buffer. Randomness is per client (see clientRand), not per
// worker, so results do not depend on scheduling.
type clientWorker struct {
	w    model.Worker
	grad []float64
	src  clientSource
}

// New returns a trainer for the model m (whose current parameters are the
// starting point theta_0) on the clients' examples train (client i holds
// train example i, i < cfg.Clients) and the test set test (may be nil).
// cfg is validated (and its defaults filled in) first.
func New(cfg Config, m model.Model, train, test *data.Dataset) (*Trainer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if train == nil || train.N < cfg.Clients {
		have := 0
		if train != nil {
			have = train.N
		}
		return nil, fmt.Errorf("clients must be <= the number of training examples (%d), got %d", have, cfg.Clients)
	}
	if train.Dim != m.InputDim() {
		return nil, fmt.Errorf("model %s expects inputs of length %d, training data has %d", m.Name(), m.InputDim(), train.Dim)
	}
	if train.Classes > m.NumClasses() {
		return nil, fmt.Errorf("model %s has %d classes, training data has %d", m.Name(), m.NumClasses(), train.Classes)
	}
	if test != nil && (test.Dim != m.InputDim() || test.Classes > m.NumClasses()) {
		return nil, fmt.Errorf("test data (dim %d, %d classes) does not fit model %s (dim %d, %d classes)",
			test.Dim, test.Classes, m.Name(), m.InputDim(), m.NumClasses())
	}
	d := m.NumParams()
	mech, err := newMechanism(cfg, d)
	if err != nil {
		return nil, err
	}
	t := &Trainer{
		cfg:     cfg,
		model:   m,
		train:   train,
		test:    test,
		mech:    mech,
		master:  rand.NewPCG(cfg.Seed, 0x636c6470736764), // "cldpsgd"
		sampler: NewClientSampler(cfg.Clients, cfg.Sample),
		sampled: make([]int, cfg.Sample),
		sum:     make([]float64, d),
	}
	t.rng = rand.New(t.master)
	t.ledger, err = NewLedger(cfg)
	if err != nil {
		return nil, err
	}
	for range cfg.Workers {
		w := &clientWorker{w: m.NewWorker(), grad: make([]float64, d)}
		if cfg.CryptoNoise {
			w.src.crypto = randomizer.NewCryptoSource()
		}
		t.workers = append(t.workers, w)
	}
	nShards := min(maxShards, cfg.Sample)
	if mech == nil { // dense non-private path: per-shard partial sums
		t.shards = make([][]float64, nShards)
		for i := range t.shards {
			t.shards[i] = make([]float64, d)
		}
	} else {
		t.reports = newReportBatch(cfg.Sample, nShards)
		if t.shuf, t.shufSrc, err = newRoundShuffler(cfg.Sample, cfg.CryptoNoise); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// Config returns the (validated) configuration.
func (t *Trainer) Config() Config { return t.cfg }

// Model returns the model being trained.
func (t *Trainer) Model() model.Model { return t.model }

// Round returns the number of rounds completed.
func (t *Trainer) Round() int { return t.round }

// Ledger returns the privacy ledger.
func (t *Trainer) Ledger() *Ledger { return t.ledger }

// shardRange returns the slots [lo, hi) of shard s out of nShards over k
// sampled clients.
func shardRange(s, nShards, k int) (lo, hi int) {
	return s * k / nShards, (s + 1) * k / nShards
}

// Step runs one round of Algorithm 1 (lines 3–11) and composes its privacy
// cost into the ledger. It returns an error, and changes nothing, if a
// target epsilon is set and the round would exceed it (ErrBudgetExhausted).
func (t *Trainer) Step() (RoundStats, error) {
	start := time.Now()
	if err := t.ledger.CheckNext(t.cfg.TargetEpsilon); err != nil {
		return RoundStats{}, err
	}
	epoch := t.cfg.EpochOf(t.round)
	lr := t.cfg.LR.Rate(epoch)
	k := t.cfg.Sample

	// Line 3: client sampling, and the key of this round's client noise.
	t.sampler.Sample(t.rng, t.sampled)
	roundKey := t.rng.Uint64()

	// Lines 4–8: every sampled client computes, clips and randomizes its
	// gradient; in parallel over fixed shards of the sampled list.
	var loss float64
	if t.mech == nil {
		loss = t.parallelShards(len(t.shards), func(w *clientWorker, s int) float64 {
			lo, hi := shardRange(s, len(t.shards), k)
			sum := t.shards[s]
			clear(sum)
			var l float64
			for slot := lo; slot < hi; slot++ {
				l += t.clientGradient(w, slot)
				t.clip(w.grad)
				for i, v := range w.grad {
					sum[i] += v
				}
			}
			return l
		})
		// Line 10 (without randomizer or shuffler): the sum, in shard order.
		copy(t.sum, t.shards[0])
		for _, sh := range t.shards[1:] {
			for i, v := range sh {
				t.sum[i] += v
			}
		}
	} else {
		b := t.reports
		loss = t.parallelShards(b.nShards, func(w *clientWorker, s int) float64 {
			lo, hi := shardRange(s, b.nShards, k)
			var l float64
			b.errs[s] = nil
			for slot := lo; slot < hi; slot++ {
				l += t.clientGradient(w, slot)
				t.clip(w.grad)
				w.src.reset(t.cfg.Seed, roundKey, uint64(slot))
				rep, err := t.mech.Randomize(w.grad, &w.src)
				if err != nil {
					b.errs[s] = fmt.Errorf("client in slot %d: %w", slot, err)
					return l
				}
				b.reports[slot] = rep
			}
			return l
		})
		if err := firstError(b.errs); err != nil {
			return RoundStats{}, err
		}
		// Line 9: the shuffler permutes the report bytes.
		if err := t.shuffle(roundKey); err != nil {
			return RoundStats{}, err
		}
		// Line 10: the server decodes and sums the shuffled reports.
		if err := t.aggregate(); err != nil {
			return RoundStats{}, err
		}
	}

	// The reports have left the clients: the round's privacy cost is
	// incurred, so it is composed before the model changes.
	if err := t.ledger.ComposeRound(); err != nil {
		return RoundStats{}, err
	}

	// Line 10: average; line 11: descent step and projection.
	params := t.model.Params()
	scale := lr / float64(k)
	for i, g := range t.sum {
		params[i] -= scale * g
	}
	if t.cfg.ProjectRadius > 0 {
		projectL2(params, t.cfg.ProjectRadius)
	}
	t.round++
	t.updates += int64(k)
	return RoundStats{Round: t.round, Epoch: epoch, LR: lr, Loss: loss / float64(k), Duration: time.Since(start)}, nil
}

// clip applies Algorithm 1, line 6 (or the l_inf clamp, see
// Config.ClampLinf).
func (t *Trainer) clip(g []float64) {
	if t.cfg.ClampLinf {
		randomizer.ClipLinf(g, t.cfg.Clip)
		return
	}
	clipInPlace(g, t.cfg.ClipNorm, t.cfg.Clip)
}

// clientGradient writes the gradient of sampled slot's example into w.grad
// and returns its loss.
func (t *Trainer) clientGradient(w *clientWorker, slot int) float64 {
	i := t.sampled[slot]
	return w.w.Gradient(t.train.Example(i), t.train.Y[i], w.grad)
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

// projectL2 projects v onto the l_2 ball of radius r (Algorithm 1, line
// 11): v <- v * min(1, r/||v||_2).
func projectL2(v []float64, r float64) {
	var s float64
	for _, x := range v {
		s += x * x
	}
	if n := math.Sqrt(s); n > r {
		f := r / n
		for i := range v {
			v[i] *= f
		}
	}
}

// clientKey derives the 32-byte ChaCha8 key of one client's noise in one
// round from the run's seed, the round's key (drawn from the run's
// sequential generator) and the client's slot in the round's sample.
// ChaCha8 is a pseudorandom function of its key, so distinct keys give
// independent-looking streams, and a client's noise does not depend on
// which worker computes it.
func clientKey(seed, roundKey, slot uint64) [32]byte {
	var k [32]byte
	binary.LittleEndian.PutUint64(k[0:], seed)
	binary.LittleEndian.PutUint64(k[8:], roundKey)
	binary.LittleEndian.PutUint64(k[16:], slot)
	copy(k[24:], "cldp-sgd")
	return k
}
