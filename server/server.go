// Package server implements the server role of the shuffle model
// (NeurIPS'21 Algorithm 1, lines 10–11): it holds the model and the
// learning-rate schedule, publishes the model for each round, receives a
// shuffled batch of sealed reports, opens and decodes them into an
// unbiased estimate of the sum of the clipped gradients, averages, takes a
// gradient step and projects.
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

	"github.com/shuffledp/shuffledp/model"
	"github.com/shuffledp/shuffledp/protocol"
	"github.com/shuffledp/shuffledp/randomizer"
)

// Schedule gives the learning rate eta of an epoch (counted from 0); an
// epoch is n/k steps.
type Schedule interface {
	Rate(epoch int) float64
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
	// Opener opens sealed reports (nil only for protocol.RandomizerNone).
	Opener protocol.Opener
	// Receipts, if not nil, records every batch received, before it is
	// used.
	Receipts ReceiptLog
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
	s := &Server{cfg: cfg, model: m, sum: make([]float64, cfg.Run.Dim)}
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

// Restore sets the server's state to a checkpointed one: steps taken and
// parameters.
func (s *Server) Restore(steps int64, params []float64) error {
	if steps < 0 {
		return fmt.Errorf("server: steps must be >= 0, got %d", steps)
	}
	if len(params) != s.cfg.Run.Dim {
		return fmt.Errorf("server: %d parameters, model has %d", len(params), s.cfg.Run.Dim)
	}
	copy(s.model.Params(), params)
	s.steps = steps
	return nil
}

// Receive is Algorithm 1, lines 10–11, for one shuffled batch: it records
// the receipt, opens every report for the batch's (run, round), adds their
// unbiased decodings (randomizer.AddDecodedAll: O(1) per report for R_inf
// and R_2, one Walsh–Hadamard transform per batch for R_1) in the batch's
// order, divides by the number of reports, steps with the epoch's learning
// rate and projects. A batch that is refused (wrong run, wrong length, a
// report that does not open or decode) changes nothing but the receipt
// log.
func (s *Server) Receive(ctx context.Context, b protocol.Batch) (Step, error) {
	if s.rand == nil {
		return Step{}, errors.New("server: randomizer none takes clear sums (ApplySum), not batches")
	}
	if err := ctx.Err(); err != nil {
		return Step{}, err
	}
	if s.cfg.Receipts != nil {
		if err := s.cfg.Receipts.Append(Receipt{Run: b.Run, Round: b.Round, Reports: len(b.Reports), Digest: b.Digest()}); err != nil {
			return Step{}, fmt.Errorf("server: receipt log: %w", err)
		}
	}
	if b.Run != s.cfg.Run.Run {
		return Step{}, fmt.Errorf("server: batch of run %q, server of run %q", b.Run, s.cfg.Run.Run)
	}
	if len(b.Reports) < s.cfg.Run.MinBatch {
		return Step{}, fmt.Errorf("server: batch of %d reports, below the run's minimum %d", len(b.Reports), s.cfg.Run.MinBatch)
	}
	bind := b.Binding()
	opened := s.opened[:0]
	for i, r := range b.Reports {
		if len(r) != s.cfg.Run.ReportBytes {
			return Step{}, fmt.Errorf("server: report %d has %d bytes, the run's reports have %d", i, len(r), s.cfg.Run.ReportBytes)
		}
		rep, err := s.cfg.Opener.Open(bind, r)
		if err != nil {
			return Step{}, fmt.Errorf("server: report %d: %w", i, err)
		}
		opened = append(opened, rep)
	}
	s.opened = opened[:0]
	defer clear(opened) // keep no reference to the batch
	clear(s.sum)
	if err := randomizer.AddDecodedAll(s.rand, opened, 1, s.sum); err != nil {
		return Step{}, fmt.Errorf("server: decoding: %w", err)
	}
	return s.step(len(opened)), nil
}

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

// step applies theta <- Pi(theta - eta/m * sum) for a sum of m reports.
func (s *Server) step(m int) Step {
	epoch := int(s.steps * int64(s.cfg.Run.PerRound) / int64(s.cfg.Run.Population))
	lr := s.cfg.LR.Rate(epoch)
	params := s.model.Params()
	scale := lr / float64(m)
	for i, g := range s.sum {
		params[i] -= scale * g
	}
	if s.cfg.ProjectRadius > 0 {
		projectL2(params, s.cfg.ProjectRadius)
	}
	s.steps++
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
