package statedir

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/shuffledp/shuffledp/ledger"
	"github.com/shuffledp/shuffledp/server"
)

// ReceiptsFile is the server's receipt log inside a state directory: one
// JSON line per batch it received (round id, report count, digest),
// fsynced before the batch is applied. Crash tests compare it with the
// ledger: every batch the server ever received must have been debited.
const ReceiptsFile = "receipts.jsonl"

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
	// Ledger holds the accounting parameters of the run's privacy ledger
	// (nil: the run has none, the non-private baseline). The training
	// package's OpenSession sets it from the run's configuration.
	Ledger *ledger.Options
}

// Session is a run kept in a state directory, so that it survives the
// process: the directory is locked for the session's life; the privacy
// ledger is a SQLite database in it (ledger.FileName), debited before
// every release and never rolled back; the checkpoint (CheckpointFile) is
// replaced atomically; each metrics line is appended only by the caller
// that has made the checkpoint of its round durable, at most one per round
// (MetricsLog); and the server's receipt log (ReceiptsFile) records every
// batch received. What a checkpoint holds, and when it is written, is the
// training loop's (package training).
type Session struct {
	dir      *Dir
	store    *ledger.SQLStore
	ledger   *ledger.Ledger
	receipts *server.FileReceipts
	metrics  *MetricsLog
}

// OpenSession locks sc.Dir (creating the directory, not its parents),
// checks the run's flags, and opens its ledger, receipt log and metrics
// file, before any data is loaded or any round runs.
func OpenSession(ctx context.Context, sc SessionConfig) (s *Session, err error) {
	metricsPath := sc.Metrics
	if metricsPath != "" {
		if err := CheckOutputFile("metrics", metricsPath); err != nil {
			return nil, err
		}
	}
	d, err := Open(sc.Dir, Options{Flags: sc.Flags, MayDiffer: sc.MayDiffer, Flag: "state"})
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
	if !d.Created() {
		if _, err := os.Stat(d.File(CheckpointFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	}
	if sc.Ledger != nil {
		if s.store, err = ledger.OpenSQLite(ctx, d.File(ledger.FileName), ledger.SQLiteOptions{}); err != nil {
			return nil, fmt.Errorf("--state %s: %w", sc.Dir, err)
		}
		if s.ledger, err = ledger.Open(ctx, s.store, s.Run(), *sc.Ledger); err != nil {
			return nil, fmt.Errorf("--state %s: %w", sc.Dir, err)
		}
	}
	if s.receipts, err = server.OpenFileReceipts(d.File(ReceiptsFile)); err != nil {
		return nil, fmt.Errorf("--state %s: %w", sc.Dir, err)
	}
	if metricsPath == "" {
		metricsPath = d.File(MetricsFile)
	} else if d.Created() {
		if st, err := os.Stat(metricsPath); err == nil && st.Size() > 0 {
			return nil, fmt.Errorf("--metrics %s exists and is not this run's; remove it or choose another path (a run started with --state %s resumes its own metrics)", metricsPath, sc.Dir)
		}
	}
	if s.metrics, err = OpenMetricsLog(metricsPath, d.Created()); err != nil {
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

// Ledger returns the run's durable ledger (nil without one).
func (s *Session) Ledger() *ledger.Ledger { return s.ledger }

// Receipts returns the server's receipt log.
func (s *Session) Receipts() *server.FileReceipts { return s.receipts }

// ReadCheckpoint returns the run's checkpoint, or an error wrapping
// os.ErrNotExist if it has none yet.
func (s *Session) ReadCheckpoint() ([]byte, error) {
	b, err := os.ReadFile(s.dir.File(CheckpointFile))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("--state %s: %w", s.dir.Path(), err)
	}
	return b, err
}

// WriteCheckpoint replaces the run's checkpoint atomically
// (WriteFileAtomic).
func (s *Session) WriteCheckpoint(b []byte) error {
	if err := WriteFileAtomic(s.dir.File(CheckpointFile), b); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

// AppendMetrics appends rec as the metrics line of round (MetricsLog.Append:
// at most one per round).
func (s *Session) AppendMetrics(round int, rec any) error {
	if _, err := s.metrics.Append(round, rec); err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	return nil
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
