// Package server implements the server role of the shuffle model
// (NeurIPS'21 Algorithm 1, lines 10–11): it holds the model and the
// learning-rate schedule, publishes the model for each round, receives a
// shuffled batch of sealed reports, opens and decodes them into an
// unbiased estimate of the sum of the clipped gradients, averages, takes a
// gradient step and projects.
//
// The step may be post-processed (Config.Optimizer: momentum, Nesterov,
// Adam; Config.EMA: an exponential moving average of the iterates for
// evaluation; any Schedule): these touch only the released average and
// the server's own state, so the run's privacy guarantee and its
// accounting are unchanged.
//
// The server never learns which clients were sampled: amplification by
// subsampling (NeurIPS'21 Theorem 1) holds against the server only if the
// sample is hidden from it. No method of Server takes or returns a client
// index; the Model it publishes depends on its own state only; a Batch
// carries report bytes and no identity, timestamp or arrival order.
package server

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/shuffledp/shuffledp/model"
	"github.com/shuffledp/shuffledp/protocol"
	"github.com/shuffledp/shuffledp/randomizer"
)

// Schedule gives the learning rate eta of a step from the progress of
// training: epoch = s*k/n, the epochs completed before the step (s the
// steps taken before it; an epoch is n/k steps), fractional within an
// epoch. A piecewise-constant schedule by epoch reads floor(epoch), which is
// exact: s*k/n is computed as float64(s*k)/float64(n) of integers below
// 2^53, and a correctly rounded quotient of such integers never rounds
// onto an integer it is not.
type Schedule interface {
	Rate(epoch float64) float64
}

// Config configures a Server.
type Config struct {
	// Run is the run's public configuration.
	Run protocol.RunConfig
	// LR is the learning-rate schedule eta_t of Algorithm 1, by epoch.
	LR Schedule
	// ProjectRadius, if positive, projects the parameters onto the l_2
	// ball of that radius after every step (Algorithm 1, line 11); 0
	// means no projection.
	ProjectRadius float64
	// Optimizer turns the average into a step; the zero value is SGD
	// (Algorithm 1, line 10).
	Optimizer Optimizer
	// EMA, if positive, is the decay beta of an exponential moving average
	// of the iterates (debiased; see Averaged), kept for evaluation; 0
	// means none. It never feeds back into the model.
	EMA float64
	// Opener opens sealed reports (nil only for protocol.RandomizerNone).
	Opener protocol.Opener
	// OpenWorkers is the number of goroutines Receive opens a batch's
	// reports on (0 or 1: the calling goroutine alone). Above 1 the Opener
	// must be safe for concurrent use (protocol.HPKEOpener and
	// protocol.Plaintext are). The reports are decoded and summed in the
	// batch's order whatever the number, so the step is the same bit for
	// bit.
	OpenWorkers int
	// Receipts, if not nil, records every batch received, before it is
	// used.
	Receipts ReceiptLog
	// Update, if not nil, replaces the optimizer and the schedule: every
	// round's step is theta <- Update(theta, mean) (external.go), the
	// caller's arithmetic on the released mean. nil: the optimizer's step.
	Update Update
	// Noise is where a central-DP server draws the Gaussian noise it adds
	// (PrepareCentralGaussian); nil means crypto/rand, the only choice for
	// a deployment. A simulation may pass a seeded stream (SIMULATION
	// ONLY).
	Noise randomizer.Source
}

// Server holds the model of one run. It is not safe for concurrent use: a
// transport delivers one batch at a time.
type Server struct {
	cfg    Config
	model  model.Model
	rand   randomizer.Randomizer // nil for the non-private baseline
	steps  int64
	sum    []float64
	opened [][]byte // scratch: the opened reports of a batch
	openOK []bool   // scratch: which reports of the batch opened
	opt    optimizerState
	avg    *average  // nil without EMA
	next   []float64 // scratch of Config.Update's next parameters
	// centralPending: s.sum holds a noisy sum of PrepareCentralGaussian.
	centralPending bool
}

// State is the server's state: all a checkpoint needs to continue a run
// bit for bit. The slices of a State returned by Server.State are the
// server's own, valid until its next step.
type State struct {
	// Steps is the number of steps taken; Params the model parameters.
	Steps  int64
	Params []float64
	// Velocity is the momentum optimizers' v (nil for the others).
	Velocity []float64
	// Moment1 and Moment2 are Adam's m and v (nil for the others).
	Moment1, Moment2 []float64
	// Average is the EMA's undebiased sum z_t (nil without EMA).
	Average []float64
}

// Step describes one model step.
type Step struct {
	// Step is the number of steps taken, counting this one.
	Step int64
	// Epoch is the epoch (from 0) the step belonged to.
	Epoch int
	// LR is the learning rate used.
	LR float64
	// Reports is the number of reports averaged.
	Reports int
	// Refused is the number of reports of the batch left out because they
	// did not open or decode (see Receive).
	Refused int
}

// New returns a server for cfg whose model m (of the run's architecture;
// its current parameters are theta_0) it updates in place.
func New(cfg Config, m model.Model) (*Server, error) {
	if err := cfg.Run.Validate(); err != nil {
		return nil, err
	}
	if m.Name() != cfg.Run.Model || m.NumParams() != cfg.Run.Dim {
		return nil, fmt.Errorf("model: run uses %s with %d parameters, got %s with %d", cfg.Run.Model, cfg.Run.Dim, m.Name(), m.NumParams())
	}
	if cfg.LR == nil {
		return nil, errors.New("lr: a learning-rate schedule is required")
	}
	if cfg.ProjectRadius < 0 || math.IsNaN(cfg.ProjectRadius) || math.IsInf(cfg.ProjectRadius, 0) {
		return nil, fmt.Errorf("project-radius must be >= 0 and finite (0 = no projection), got %g", cfg.ProjectRadius)
	}
	if err := cfg.Optimizer.Validate(); err != nil {
		return nil, err
	}
	if err := validateEMA(cfg.EMA); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, model: m, sum: make([]float64, cfg.Run.Dim), opt: newOptimizerState(cfg.Optimizer, cfg.Run.Dim)}
	if cfg.EMA > 0 {
		s.avg = &average{beta: cfg.EMA, z: make([]float64, cfg.Run.Dim)}
	}
	if cfg.Run.Randomizer != protocol.RandomizerNone {
		if cfg.Opener == nil {
			return nil, errors.New("server: an opener is required for a private randomizer")
		}
		r, err := protocol.NewRandomizer(cfg.Run)
		if err != nil {
			return nil, err
		}
		s.rand = r
		s.opened = make([][]byte, 0, cfg.Run.PerRound)
	}
	return s, nil
}

// RunConfig returns the run's configuration.
func (s *Server) RunConfig() protocol.RunConfig { return s.cfg.Run }

// Steps returns the number of model steps taken.
func (s *Server) Steps() int64 { return s.steps }

// Model publishes the model for the next round: the current parameters,
// versioned by the number of steps taken. Params is the server's live
// vector, valid until the next step; nobody may write it.
func (s *Server) Model() protocol.Model {
	return protocol.Model{Run: s.cfg.Run.Run, Version: s.steps, Params: s.model.Params()}
}

// State returns the server's state (its own slices, not copies).
func (s *Server) State() State {
	st := State{Steps: s.steps, Params: s.model.Params(), Velocity: s.opt.velocity, Moment1: s.opt.m1, Moment2: s.opt.m2}
	if s.avg != nil {
		st.Average = s.avg.z
	}
	return st
}

// Restore sets the server's state to a checkpointed one. Every vector the
// server's optimizer and EMA keep must be present, of the model's length,
// and no other; nothing changes on an error.
func (s *Server) Restore(st State) error {
	if st.Steps < 0 {
		return fmt.Errorf("server: steps must be >= 0, got %d", st.Steps)
	}
	d := s.cfg.Run.Dim
	have := s.State()
	for _, v := range []struct {
		name      string
		got, want []float64
	}{
		{"parameters", st.Params, have.Params},
		{"momentum velocity", st.Velocity, have.Velocity},
		{"Adam first moments", st.Moment1, have.Moment1},
		{"Adam second moments", st.Moment2, have.Moment2},
		{"EMA", st.Average, have.Average},
	} {
		switch {
		case v.want == nil && v.got != nil:
			return fmt.Errorf("server: state has %s, the server (optimizer %s, ema %g) keeps none", v.name, s.cfg.Optimizer.Kind(), s.cfg.EMA)
		case v.want != nil && len(v.got) != d:
			return fmt.Errorf("server: state has %d values of %s, the server (optimizer %s, ema %g) keeps %d", len(v.got), v.name, s.cfg.Optimizer.Kind(), s.cfg.EMA, d)
		}
	}
	copy(s.model.Params(), st.Params)
	copy(s.opt.velocity, st.Velocity)
	copy(s.opt.m1, st.Moment1)
	copy(s.opt.m2, st.Moment2)
	if s.avg != nil {
		copy(s.avg.z, st.Average)
	}
	s.steps = st.Steps
	return nil
}

// Averaged writes the exponential moving average of the iterates (Config.EMA)
// into dst (of the model's length) and returns true; false, writing nothing,
// without EMA. After t >= 1 steps it is
//
//	z_t / (1 - beta^t),  z_t = beta z_{t-1} + (1 - beta) theta_t,  z_0 = 0,
//
// the beta^(t-i)-weighted mean of the iterates theta_1..theta_t; before the
// first step it is theta_0.
func (s *Server) Averaged(dst []float64) bool {
	if s.avg == nil {
		return false
	}
	if s.steps == 0 {
		copy(dst, s.model.Params())
	} else {
		s.avg.value(dst, s.steps)
	}
	return true
}

// Receive is Algorithm 1, lines 10–11, for one shuffled batch: it records
// the receipt (its digest computed beside the decoding, appended before
// any step), opens every report for the batch's (run, round), adds their
// unbiased decodings (randomizer.AddDecodedAll: O(1) per report for R_inf
// and R_2, one Walsh–Hadamard transform per batch for R_1) in the batch's
// order, divides by the number of reports, steps with the epoch's learning
// rate and projects. A batch that is refused (wrong run, below the minimum
// batch) changes nothing but the receipt log.
//
// A single report that does not open (wrong length, unknown key, sealed to
// another key, tampered) or does not decode (a well-sealed report that is
// not a valid output of the run's randomizer) is left out and counted in
// Step.Refused; the others are averaged (divided by their number). The
// batch was released and debited by the shuffler before it got here, so
// dropping a report is post-processing of the released batch and changes
// no privacy guarantee; refusing the whole batch instead would let one
// misbehaving sampled client stop the run. Every randomizer's AddDecoded
// validates a report before adding anything, so a refused report leaves the
// sum untouched. If no report of the batch is usable, no step is taken and
// ErrNoUsableReport is returned.
func (s *Server) Receive(ctx context.Context, b protocol.Batch) (Step, error) {
	if s.rand == nil {
		return Step{}, errors.New("server: randomizer none takes clear sums (ApplySum), not batches")
	}
	if err := ctx.Err(); err != nil {
		return Step{}, err
	}
	receipt := s.receipt(&b) // exactly once on every path below
	if b.Run != s.cfg.Run.Run {
		if err := receipt(); err != nil {
			return Step{}, err
		}
		return Step{}, fmt.Errorf("server: batch of run %q, server of run %q", b.Run, s.cfg.Run.Run)
	}
	if len(b.Reports) < s.cfg.Run.MinBatch {
		if err := receipt(); err != nil {
			return Step{}, err
		}
		return Step{}, fmt.Errorf("server: batch of %d reports, below the run's minimum %d", len(b.Reports), s.cfg.Run.MinBatch)
	}
	opened, refused := s.open(b)
	s.opened = opened[:0]
	defer clear(opened) // keep no reference to the batch
	clear(s.sum)
	used := len(opened)
	if err := randomizer.AddDecodedAll(s.rand, opened, 1, s.sum); err != nil {
		// Some report does not decode: add them one by one, leaving out
		// the malformed ones (AddDecoded leaves sum untouched on error).
		clear(s.sum)
		used = 0
		for _, rep := range opened {
			if s.rand.AddDecoded(randomizer.Report(rep), 1, s.sum) == nil {
				used++
			}
		}
	}
	if err := receipt(); err != nil {
		return Step{}, err // no step without the receipt
	}
	refused += len(opened) - used
	if used == 0 {
		return Step{Refused: refused}, fmt.Errorf("server: round %d: %w (%d refused)", b.Round, ErrNoUsableReport, refused)
	}
	if s.cfg.Update != nil {
		st, err := s.stepExternal(used)
		st.Refused = refused
		if err != nil {
			return st, fmt.Errorf("server: round %d: %w", b.Round, err)
		}
		return st, nil
	}
	st := s.step(used)
	st.Refused = refused
	return st, nil
}

// openChunk is the number of consecutive reports a worker of open takes
// at a time: large enough that the shared counter costs nothing beside
// 128 HPKE opens (~50 µs each), small enough to balance the workers.
const openChunk = 128

// open opens the reports of b (Config.OpenWorkers goroutines taking chunks
// of consecutive reports) and returns those that opened, in the batch's
// order, and the number that did not (wrong length or Opener error).
func (s *Server) open(b protocol.Batch) (opened [][]byte, refused int) {
	bind := b.Binding()
	n := len(b.Reports)
	out := s.opened[:0]
	if cap(out) < n {
		out = make([][]byte, 0, n)
	}
	out = out[:n]
	if cap(s.openOK) < n {
		s.openOK = make([]bool, n)
	}
	ok := s.openOK[:n]
	openOne := func(i int) {
		out[i], ok[i] = nil, false
		if r := b.Reports[i]; len(r) == s.cfg.Run.ReportBytes {
			if rep, err := s.cfg.Opener.Open(bind, r); err == nil {
				out[i], ok[i] = rep, true
			}
		}
	}
	if w := min(s.cfg.OpenWorkers, (n+openChunk-1)/openChunk); w > 1 {
		var next atomic.Int64
		var wg sync.WaitGroup
		for range w {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					lo := int(next.Add(openChunk)) - openChunk
					if lo >= n {
						return
					}
					for i := lo; i < min(lo+openChunk, n); i++ {
						openOne(i)
					}
				}
			}()
		}
		wg.Wait()
	} else {
		for i := range n {
			openOne(i)
		}
	}
	// Compact in order: the reports that opened, then the count of the rest.
	k := 0
	for i := range n {
		if ok[i] {
			out[k] = out[i]
			k++
		}
	}
	clear(out[k:])
	return out[:k], n - k
}

// receipt starts the digest of b for the receipt log on another goroutine,
// so that it runs beside the opening and decoding of the batch (both only
// read the reports; Opener.Open does not modify sealed), and returns the
// function that waits for the digest and appends the receipt. Receive
// calls it exactly once on every path after the context check, before it
// returns and before any step: a batch is on the receipt log before it
// changes the model, refused or not. Without a receipt log it returns a
// no-op.
func (s *Server) receipt(b *protocol.Batch) func() error {
	if s.cfg.Receipts == nil {
		return func() error { return nil }
	}
	digest := make(chan [32]byte, 1)
	go func() { digest <- b.Digest() }()
	return func() error {
		r := Receipt{Run: b.Run, Round: b.Round, Reports: len(b.Reports), Digest: <-digest}
		if err := s.cfg.Receipts.Append(r); err != nil {
			return fmt.Errorf("server: receipt log: %w", err)
		}
		return nil
	}
}

// ErrNoUsableReport: no report of a batch opened and decoded, so the
// server took no step.
var ErrNoUsableReport = errors.New("no report of the batch opens and decodes")

// ApplySum is the non-private baseline's server step
// (protocol.RandomizerNone): sum is the plain sum of reports clipped
// gradients, formed in the clear by the caller (there is no randomizer, no
// shuffler and no privacy claim).
func (s *Server) ApplySum(sum []float64, reports int) (Step, error) {
	if s.rand != nil {
		return Step{}, fmt.Errorf("server: randomizer %s: clear sums are refused", s.cfg.Run.Randomizer)
	}
	if len(sum) != s.cfg.Run.Dim || reports < 1 {
		return Step{}, fmt.Errorf("server: sum of length %d over %d reports (want length %d, >= 1 report)", len(sum), reports, s.cfg.Run.Dim)
	}
	copy(s.sum, sum)
	return s.step(reports), nil
}

// step applies theta <- Pi(theta - eta/m * sum) for a sum of m reports
// (or the optimizer's step on g = sum/m), then updates the EMA.
func (s *Server) step(m int) Step {
	done := s.steps * int64(s.cfg.Run.PerRound)
	epoch := int(done / int64(s.cfg.Run.Population))
	lr := s.cfg.LR.Rate(float64(done) / float64(s.cfg.Run.Population))
	params := s.model.Params()
	s.cfg.Optimizer.apply(&s.opt, params, s.sum, m, lr, s.steps+1)
	if s.cfg.ProjectRadius > 0 {
		projectL2(params, s.cfg.ProjectRadius)
	}
	s.steps++
	if s.avg != nil {
		s.avg.update(params)
	}
	return Step{Step: s.steps, Epoch: epoch, LR: lr, Reports: m}
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
