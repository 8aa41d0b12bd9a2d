package training

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/shuffledp/shuffledp/data"
	"github.com/shuffledp/shuffledp/metrics"
	"github.com/shuffledp/shuffledp/model"
	"github.com/shuffledp/shuffledp/statedir"
)

// LocalConfig configures OpenLocal: a simulated run as `shuffledp train`
// runs it.
type LocalConfig struct {
	// Options are the run's options (dataset, model, seed) and Config
	// their validated configuration; OpenLocal sets its RunID.
	Options Options
	Config  Config
	// State is the run's state directory ("": none; the ledger is then
	// kept in memory and the run cannot resume), Flags its identity there.
	State string
	Flags map[string]string
	// Metrics is the metrics file: with State, "" means the state
	// directory's; without, a fresh file (refused if it exists and is not
	// empty), or "" for none.
	Metrics string
}

// LocalRun is a simulated run and where it is kept: a state directory
// (Session), or a fresh metrics file (Log), or nothing.
type LocalRun struct {
	Trainer *Trainer
	Session *statedir.Session
	Log     *statedir.MetricsLog
	// ResumedAt is the number of rounds the session's checkpoint had
	// completed.
	ResumedAt int
}

// OpenLocal refuses a negative TestSize or Validation and a data spec that
// cannot load (data.Spec.Check), naming the flag, checks every output, and
// locks the state directory, before any data is loaded or any round runs
// (a start refused later removes the state directory and metrics file it
// created); then it loads the data, builds the
// model (theta_0 from the seed) and the trainer on the outputs, and
// resumes the session's checkpoint or opens the fresh metrics file. On
// error everything opened is closed.
func OpenLocal(ctx context.Context, c LocalConfig) (_ *LocalRun, err error) {
	if c.Options.TestSize < 0 {
		return nil, fmt.Errorf("test-size must be >= 0, got %d", c.Options.TestSize)
	}
	if c.Options.Validation < 0 {
		return nil, fmt.Errorf("validation must be >= 0, got %d", c.Options.Validation)
	}
	if err := c.Options.DataSpec().Check(); err != nil {
		return nil, err // before any output exists
	}
	r := &LocalRun{}
	cfg := c.Config
	// A refused start removes the outputs it created (not those that
	// existed), so that the corrected command starts clean.
	fresh := statedir.NewFreshPaths(c.State, c.Metrics)
	if c.State != "" {
		r.Session, err = OpenSession(ctx, statedir.SessionConfig{Dir: c.State, Flags: c.Flags, MayDiffer: ResumableFlags, Metrics: c.Metrics}, &cfg)
		if err != nil {
			return nil, err
		}
	} else if c.Metrics != "" {
		if err := statedir.CheckOutputFile("metrics", c.Metrics); err != nil {
			return nil, err
		}
		if st, err := os.Stat(c.Metrics); err == nil && st.Size() > 0 {
			return nil, fmt.Errorf("--metrics %s exists; remove it or choose another path (to keep a run that can resume, use --state DIR)", c.Metrics)
		}
	}
	defer func() {
		if err != nil {
			r.Close() // before fresh.Remove: the lock is released first
			fresh.Remove()
		}
	}()
	train, test, err := data.Load(c.Options.DataSpec())
	if err != nil {
		return nil, err
	}
	m, err := model.New(c.Options.Model, train.Dim, train.Classes)
	if err != nil {
		return nil, err
	}
	m.Init(model.NewInitRNG(c.Options.Seed))
	var opts []Option
	if r.Session != nil {
		opts = SessionOptions(r.Session)
	}
	if r.Trainer, err = New(cfg, m, train, test, opts...); err != nil {
		return nil, err
	}
	if r.Session != nil {
		r.ResumedAt, err = r.Trainer.Resume(r.Session)
		return r, err
	}
	if c.Metrics != "" {
		if r.Log, err = statedir.OpenMetricsLog(c.Metrics, true); err != nil {
			return nil, fmt.Errorf("--metrics: %w", err)
		}
	}
	return r, nil
}

// Run runs the trainer, in its session if it has one (RunSession),
// appending every evaluation to the fresh metrics file before hooks.OnEval
// hears it.
func (r *LocalRun) Run(ctx context.Context, hooks Hooks) (StopReason, error) {
	if r.Log != nil {
		onEval := hooks.OnEval
		hooks.OnEval = func(rec metrics.Record) error {
			if _, err := r.Log.Append(rec.Round, rec); err != nil {
				return fmt.Errorf("metrics: %w", err)
			}
			if onEval != nil {
				return onEval(rec)
			}
			return nil
		}
	}
	if r.Session != nil {
		return r.Trainer.RunSession(ctx, r.Session, hooks)
	}
	return r.Trainer.Run(ctx, hooks)
}

// Close closes the metrics file and the session.
func (r *LocalRun) Close() error {
	var errs []error
	if r.Log != nil {
		errs = append(errs, r.Log.Close())
	}
	if r.Session != nil {
		errs = append(errs, r.Session.Close())
	}
	return errors.Join(errs...)
}
