package training

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/shuffledp/shuffledp/internal/faultpoint"
	"github.com/shuffledp/shuffledp/ledger"
	"github.com/shuffledp/shuffledp/metrics"
	"github.com/shuffledp/shuffledp/server"
	"github.com/shuffledp/shuffledp/statedir"
)

// ReceiptsFile is the server's receipt log inside a state directory: one
// JSON line per batch it received (round id, report count, digest),
// fsynced before the batch is applied. Crash tests compare it with the
// ledger: every batch the server ever received must have been debited.
const ReceiptsFile = "receipts.jsonl"

// PointCheckpointedNoMetrics is the crash-test point between a durable
// checkpoint and the metrics line that describes it.
const PointCheckpointedNoMetrics = "training.checkpointed-no-metrics"

// SessionConfig describes a run kept in a state directory.
type SessionConfig struct {
	// Dir is the state directory (--state). Its parent must exist.
	Dir string
	// Flags are this invocation's settings (flag name → canonical value),
	// recorded when the run starts and compared when it resumes.
	Flags map[string]string
	// MayDiffer lists the flags that may change across a resume.
	MayDiffer []string
	// Metrics is the metrics file; "" means DIR/metrics.jsonl.
	Metrics string
}

// Session is a CLDP-SGD run kept in a state directory, so that it survives
// the process: the directory is locked for the session's life; the privacy
// ledger is a SQLite database in it (ledger.FileName), debited by the
// shuffler before every release and never rolled back; the checkpoint
// (model and simulation state) is replaced atomically at every evaluation
// and when the run stops; each metrics line is written only after the
// checkpoint of its round is durable, at most one per round; and the
// server's receipt log records every batch received.
//
// A rerun with the same flags resumes: the model from the checkpoint, the
// budget from the ledger (rounds debited after the checkpoint stay spent;
// see shuffler.LedgerBudget for how their replay is charged).
type Session struct {
	dir      *statedir.Dir
	cfg      Config
	store    *ledger.SQLiteStore
	ledger   *ledger.Ledger
	receipts *server.FileReceipts
	metrics  *statedir.MetricsLog
	tr       *Trainer
}

// OpenSession locks sc.Dir (creating the directory, not its parents),
// checks the run's flags, and opens its ledger, receipt log and metrics
// file, before any data is loaded or any round runs. cfg.RunID is set to
// the run's id.
func OpenSession(ctx context.Context, sc SessionConfig, cfg *Config) (s *Session, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	metricsPath := sc.Metrics
	if metricsPath != "" {
		if err := statedir.CheckOutputFile("metrics", metricsPath); err != nil {
			return nil, err
		}
	}
	d, err := statedir.Open(sc.Dir, statedir.Options{Flags: sc.Flags, MayDiffer: sc.MayDiffer, Flag: "state"})
	if err != nil {
		return nil, err
	}
	s = &Session{dir: d}
	defer func() {
		if err != nil {
			s.Close()
			s = nil
		}
	}()
	cfg.RunID = d.Manifest().Run
	s.cfg = *cfg
	if !d.Created() {
		if _, err := os.Stat(d.File(statedir.CheckpointFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	}
	if cfg.Randomizer != RandomizerNone {
		if s.store, err = ledger.OpenSQLite(ctx, d.File(ledger.FileName), ledger.SQLiteOptions{}); err != nil {
			return nil, fmt.Errorf("--state %s: %w", sc.Dir, err)
		}
		if s.ledger, err = ledger.Open(ctx, s.store, cfg.RunID, cfg.LedgerOptions()); err != nil {
			return nil, fmt.Errorf("--state %s: %w", sc.Dir, err)
		}
	}
	if s.receipts, err = server.OpenFileReceipts(d.File(ReceiptsFile)); err != nil {
		return nil, fmt.Errorf("--state %s: %w", sc.Dir, err)
	}
	if metricsPath == "" {
		metricsPath = d.File(statedir.MetricsFile)
	} else if d.Created() {
		if st, err := os.Stat(metricsPath); err == nil && st.Size() > 0 {
			return nil, fmt.Errorf("--metrics %s exists and is not this run's; remove it or choose another path (a run started with --state %s resumes its own metrics)", metricsPath, sc.Dir)
		}
	}
	if s.metrics, err = statedir.OpenMetricsLog(metricsPath, d.Created()); err != nil {
		return nil, fmt.Errorf("--metrics: %w", err)
	}
	return s, nil
}

// Resumed reports whether the directory held the run already.
func (s *Session) Resumed() bool { return !s.dir.Created() }

// Run returns the run's id.
func (s *Session) Run() string { return s.dir.Manifest().Run }

// Dir returns the state directory's path.
func (s *Session) Dir() string { return s.dir.Path() }

// Ledger returns the run's durable ledger (nil without a randomizer).
func (s *Session) Ledger() *ledger.Ledger { return s.ledger }

// Options are the trainer options that connect it to the session: the
// durable ledger and the receipt log.
func (s *Session) Options() []Option {
	opts := []Option{WithReceipts(s.receipts)}
	if s.ledger != nil {
		opts = append(opts, WithLedger(s.ledger))
	}
	return opts
}

// Attach binds the trainer (built with s.Options()) to the session and
// restores its checkpoint, if the run has one. It returns the number of
// rounds the checkpoint had completed.
func (s *Session) Attach(tr *Trainer) (int, error) {
	if tr.ledger != s.ledger || tr.run.Run != s.Run() {
		return 0, errors.New("session: trainer was not built with the session's options")
	}
	s.tr = tr
	path := s.dir.File(statedir.CheckpointFile)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err := tr.LoadCheckpoint(path); err != nil {
		return 0, fmt.Errorf("--state %s: %w", s.dir.Path(), err)
	}
	return tr.Round(), nil
}

// Checkpoint replaces the run's checkpoint atomically.
func (s *Session) Checkpoint() error {
	var buf bytes.Buffer
	if err := s.tr.WriteCheckpoint(&buf); err != nil {
		return err
	}
	if err := statedir.WriteFileAtomic(s.dir.File(statedir.CheckpointFile), buf.Bytes()); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

// Train runs the attached trainer (Trainer.Run) with hooks, checkpointing
// at every evaluation before the record is written to the metrics file and
// passed to hooks.OnEval, and once more when the run stops, whatever the
// reason.
func (s *Session) Train(ctx context.Context, hooks Hooks) (StopReason, error) {
	if s.tr == nil {
		return "", errors.New("session: no trainer attached")
	}
	inner := hooks.OnEval
	hooks.OnEval = func(r metrics.Record) error {
		if r.Round > 0 {
			if err := s.Checkpoint(); err != nil {
				return err
			}
		}
		faultpoint.Hit(PointCheckpointedNoMetrics)
		if _, err := s.metrics.Append(r.Round, r); err != nil {
			return fmt.Errorf("metrics: %w", err)
		}
		if inner != nil {
			return inner(r)
		}
		return nil
	}
	reason, err := s.tr.Run(ctx, hooks)
	if s.tr.Round() > 0 {
		if cerr := s.Checkpoint(); err == nil {
			err = cerr
		}
	}
	return reason, err
}

// Close releases the directory lock and closes the files. It is safe to
// call more than once.
func (s *Session) Close() error {
	var errs []error
	if s.metrics != nil {
		errs = append(errs, s.metrics.Close())
		s.metrics = nil
	}
	if s.receipts != nil {
		errs = append(errs, s.receipts.Close())
		s.receipts = nil
	}
	if s.store != nil {
		errs = append(errs, s.store.Close())
		s.store = nil
	}
	if s.dir != nil {
		errs = append(errs, s.dir.Close())
		s.dir = nil
	}
	return errors.Join(errs...)
}
