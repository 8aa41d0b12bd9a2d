package training

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/shuffledp/shuffledp/internal/faultpoint"
	"github.com/shuffledp/shuffledp/metrics"
	"github.com/shuffledp/shuffledp/statedir"
)

// PointCheckpointedNoMetrics is the crash-test point between a durable
// checkpoint and the metrics line that describes it.
const PointCheckpointedNoMetrics = "training.checkpointed-no-metrics"

// OpenSession validates cfg and opens the run's state directory
// (statedir.OpenSession: lock, flags, durable ledger with cfg's accounting
// parameters unless the run is the non-private baseline, receipt log,
// metrics), before any data is loaded or any round runs. cfg.RunID is set
// to the run's id.
func OpenSession(ctx context.Context, sc statedir.SessionConfig, cfg *Config) (*statedir.Session, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	sc.Ledger = nil
	if cfg.Randomizer != RandomizerNone {
		o := cfg.LedgerOptions()
		sc.Ledger = &o
	}
	s, err := statedir.OpenSession(ctx, sc)
	if err != nil {
		return nil, err
	}
	cfg.RunID = s.Run()
	return s, nil
}

// SessionOptions are the trainer options that connect it to the session:
// its durable ledger and its receipt log.
func SessionOptions(s *statedir.Session) []Option {
	opts := []Option{WithReceipts(s.Receipts())}
	if l := s.Ledger(); l != nil {
		opts = append(opts, WithLedger(l))
	}
	return opts
}

// Resume restores the trainer (built with SessionOptions(s)) from the
// session's checkpoint, if the run has one. It returns the number of rounds
// the checkpoint had completed.
//
// A resumed run continues from the checkpoint's model, and its budget from
// the ledger (rounds debited after the checkpoint stay spent; see
// shuffler.LedgerBudget for how their replay is charged).
func (t *Trainer) Resume(s *statedir.Session) (int, error) {
	if t.ledger != s.Ledger() || t.run.Run != s.Run() {
		return 0, errors.New("session: trainer was not built with the session's options")
	}
	b, err := s.ReadCheckpoint()
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if err := t.ReadCheckpoint(bytes.NewReader(b)); err != nil {
		return 0, fmt.Errorf("--state %s: %w", s.Dir(), err)
	}
	return t.Round(), nil
}

// checkpoint replaces the session's checkpoint with the trainer's state.
func (t *Trainer) checkpoint(s *statedir.Session) error {
	var buf bytes.Buffer
	if err := t.WriteCheckpoint(&buf); err != nil {
		return err
	}
	return s.WriteCheckpoint(buf.Bytes())
}

// RunSession is Run kept in the session: at every evaluation the checkpoint
// is made durable before the record is written to the metrics file and
// passed to hooks.OnEval, and the checkpoint is written once more when the
// run stops, whatever the reason.
func (t *Trainer) RunSession(ctx context.Context, s *statedir.Session, hooks Hooks) (StopReason, error) {
	inner := hooks.OnEval
	hooks.OnEval = func(r metrics.Record) error {
		if r.Round > 0 {
			if err := t.checkpoint(s); err != nil {
				return err
			}
		}
		faultpoint.Hit(PointCheckpointedNoMetrics)
		if err := s.AppendMetrics(r.Round, r); err != nil {
			return err
		}
		if inner != nil {
			return inner(r)
		}
		return nil
	}
	reason, err := t.Run(ctx, hooks)
	if t.Round() > 0 {
		if cerr := t.checkpoint(s); err == nil {
			err = cerr
		}
	}
	return reason, err
}
