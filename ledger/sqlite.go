package ledger

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/shuffledp/shuffledp/internal/faultpoint"
	"modernc.org/sqlite" // registers the pure-Go "sqlite" driver
)

// FileName is the name of the ledger database inside a state directory.
const FileName = "ledger.db"

// SchemaVersion is the version of the SQL schema this package writes. A
// database with another version is refused, never migrated silently.
const SchemaVersion = 1

// Fault points of SQLiteStore.Append (package internal/faultpoint), for
// crash tests that kill the process inside a debit.
const (
	// PointAppendInTransaction: the entry is inserted and the run's count
	// updated, the transaction not committed. A kill here writes nothing.
	PointAppendInTransaction = "ledger.append.in-transaction"
	// PointAppendCommitted: the transaction is committed, Append has not
	// returned. A kill here leaves the entry durable although its caller
	// never learnt it (a restart finds it; a retry is idempotent).
	PointAppendCommitted = "ledger.append.committed"
)

// application identifies a shuffledp ledger in the meta table.
const application = "shuffledp-ledger"

// schema creates the tables. It is plain SQL that PostgreSQL also accepts:
// the (run, round) key is a UNIQUE constraint, times are RFC 3339 text in
// UTC, events JSON text, digests hexadecimal text.
var schema = []string{
	`CREATE TABLE IF NOT EXISTS meta (
		key   TEXT PRIMARY KEY,
		value TEXT NOT NULL
	)`,
	`CREATE TABLE IF NOT EXISTS runs (
		run        TEXT PRIMARY KEY,
		delta      DOUBLE PRECISION NOT NULL,
		bound      TEXT NOT NULL,
		orders     TEXT NOT NULL,
		entries    BIGINT NOT NULL,
		created_at TEXT NOT NULL
	)`,
	`CREATE TABLE IF NOT EXISTS entries (
		run        TEXT NOT NULL REFERENCES runs (run),
		round      BIGINT NOT NULL,
		mechanism  TEXT NOT NULL,
		event      TEXT NOT NULL,
		reports    BIGINT NOT NULL,
		digest     TEXT NOT NULL,
		created_at TEXT NOT NULL,
		UNIQUE (run, round)
	)`,
}

// SQLiteOptions configure OpenSQLite.
type SQLiteOptions struct {
	// ReadOnly opens an existing ledger for reading only (nothing is
	// created or written; Register and Append fail).
	ReadOnly bool
	// BusyTimeout is how long a statement waits for another connection's
	// or process's lock before failing; 0 means 10 s.
	BusyTimeout time.Duration
}

// SQLiteStore is a Store in an SQLite database file, through the pure-Go
// driver modernc.org/sqlite (no cgo).
//
// Durability: the database runs in WAL mode with synchronous=FULL, so a
// transaction is fsynced to the write-ahead log before its commit returns,
// and survives a kill -9 of the process and, as far as SQLite and the file
// system guarantee (https://www.sqlite.org/atomiccommit.html), a power
// loss. Every write is one transaction that takes the write lock first
// (BEGIN IMMEDIATE), so processes sharing the file serialize on it and the
// UNIQUE (run, round) key decides between them.
type SQLiteStore struct {
	db       *sql.DB
	path     string
	readOnly bool
	busy     time.Duration // how long to retry a transaction SQLite answers SQLITE_BUSY
}

// dsn returns the driver's name for path: a file: URI (so that a path with
// '?' or '#' is not misread) with the connection's pragmas.
func dsn(path string, opts SQLiteOptions) string {
	busy := busyTimeout(opts)
	q := url.Values{}
	q.Set("_busy_timeout", strconv.FormatInt(busy.Milliseconds(), 10))
	q.Set("_foreign_keys", "1")
	q.Set("_txlock", "immediate")
	if opts.ReadOnly {
		q.Set("mode", "ro")
		q.Set("_query_only", "1")
	} else {
		q.Set("mode", "rwc")
		q.Set("_journal_mode", "WAL")
		q.Set("_synchronous", "FULL")
	}
	u := url.URL{Scheme: "file", Path: path, RawQuery: q.Encode()}
	return u.String()
}

func busyTimeout(opts SQLiteOptions) time.Duration {
	if opts.BusyTimeout <= 0 {
		return 10 * time.Second
	}
	return opts.BusyTimeout
}

// isBusy reports whether err is SQLite's SQLITE_BUSY or SQLITE_LOCKED
// (any extended code). SQLite does not call the busy handler in some
// cases, for example while another connection creates the database or
// recovers the write-ahead log after a crash, so callers retry.
func isBusy(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	code := se.Code() & 0xff
	return code == 5 || code == 6 // SQLITE_BUSY, SQLITE_LOCKED
}

// retryBusy runs f until it returns something other than a busy error or
// timeout has passed, backing off from 1 ms to 50 ms.
func retryBusy(ctx context.Context, timeout time.Duration, f func() error) error {
	deadline := time.Now().Add(timeout)
	wait := time.Millisecond
	for {
		err := f()
		if !isBusy(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(2*wait, 50*time.Millisecond)
	}
}

// OpenSQLite opens the ledger database at path, creating it (and its
// schema) unless opts.ReadOnly; the parent directory must exist. A new
// file's directory entry is fsynced before OpenSQLite returns.
func OpenSQLite(ctx context.Context, path string, opts SQLiteOptions) (*SQLiteStore, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("ledger %s: %w", path, err)
	}
	_, statErr := os.Stat(abs)
	created := errors.Is(statErr, os.ErrNotExist)
	if opts.ReadOnly && statErr != nil {
		return nil, fmt.Errorf("ledger: %w", statErr)
	}
	if !opts.ReadOnly {
		dir := filepath.Dir(abs)
		if st, err := os.Stat(dir); err != nil {
			return nil, fmt.Errorf("ledger: %w", err)
		} else if !st.IsDir() {
			return nil, fmt.Errorf("ledger: %s is not a directory", dir)
		}
	}
	var s *SQLiteStore
	err = retryBusy(ctx, busyTimeout(opts), func() error {
		db, err := sql.Open("sqlite", dsn(abs, opts))
		if err != nil {
			return err
		}
		// One connection: the process's own callers queue in database/sql
		// rather than on SQLite's file lock; other processes wait up to the
		// busy timeout.
		db.SetMaxOpenConns(1)
		s = &SQLiteStore{db: db, path: abs, readOnly: opts.ReadOnly, busy: busyTimeout(opts)}
		if err := s.init(ctx); err != nil {
			db.Close()
			return err
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("ledger %s: %w", path, err)
	}
	if created && !opts.ReadOnly {
		if err := syncDir(filepath.Dir(abs)); err != nil {
			s.db.Close()
			return nil, fmt.Errorf("ledger %s: %w", path, err)
		}
	}
	return s, nil
}

// syncDir fsyncs a directory, so that a file created in it survives a
// power loss.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// init creates the schema if needed and checks its version.
func (s *SQLiteStore) init(ctx context.Context) error {
	if s.readOnly {
		return s.checkVersion(ctx, s.db)
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		for _, stmt := range schema {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("creating schema: %w", err)
			}
		}
		for _, kv := range [][2]string{{"application", application}, {"schema_version", strconv.Itoa(SchemaVersion)}} {
			if _, err := tx.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING`, kv[0], kv[1]); err != nil {
				return fmt.Errorf("writing meta: %w", err)
			}
		}
		return s.checkVersion(ctx, tx)
	})
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// checkVersion refuses a database that is not a ledger of SchemaVersion.
func (s *SQLiteStore) checkVersion(ctx context.Context, q querier) error {
	var app, version string
	if err := q.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'application'`).Scan(&app); err != nil {
		return fmt.Errorf("not a shuffledp ledger (no meta table): %w", err)
	}
	if app != application {
		return fmt.Errorf("not a shuffledp ledger (application %q)", app)
	}
	if err := q.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'schema_version'`).Scan(&version); err != nil {
		return fmt.Errorf("reading schema version: %w", err)
	}
	if version != strconv.Itoa(SchemaVersion) {
		return fmt.Errorf("ledger schema version %s, this program reads version %d", version, SchemaVersion)
	}
	return nil
}

// tx runs f in one transaction (BEGIN IMMEDIATE: the write lock is taken
// first), committing if f returns nil and rolling back otherwise; a
// transaction SQLite refuses as busy is retried whole, up to the busy
// timeout.
func (s *SQLiteStore) tx(ctx context.Context, f func(*sql.Tx) error) error {
	return retryBusy(ctx, s.busy, func() error { return s.tx1(ctx, f) })
}

func (s *SQLiteStore) tx1(ctx context.Context, f func(*sql.Tx) error) (err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	if err = f(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// Path returns the database file's absolute path.
func (s *SQLiteStore) Path() string { return s.path }

func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, err
	}
	return t.UTC(), nil
}

func formatOrders(o []float64) (string, error) {
	if len(o) == 0 {
		return "", nil
	}
	b, err := json.Marshal(o)
	return string(b), err
}

func parseOrders(s string) ([]float64, error) {
	if s == "" {
		return nil, nil
	}
	var o []float64
	if err := json.Unmarshal([]byte(s), &o); err != nil {
		return nil, fmt.Errorf("orders %q: %w", s, err)
	}
	return o, nil
}

// Register implements Store.
func (s *SQLiteStore) Register(ctx context.Context, info RunInfo) (RunInfo, error) {
	info, err := info.normalize()
	if err != nil {
		return RunInfo{}, err
	}
	orders, err := formatOrders(info.Orders)
	if err != nil {
		return RunInfo{}, err
	}
	info.Created = time.Now().Round(0).UTC()
	var out RunInfo
	err = s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO runs (run, delta, bound, orders, entries, created_at)
			VALUES ($1, $2, $3, $4, 0, $5) ON CONFLICT (run) DO NOTHING`,
			info.Run, info.Delta, info.Bound, orders, formatTime(info.Created)); err != nil {
			return err
		}
		out, err = readRun(ctx, tx, info.Run)
		return err
	})
	if err != nil {
		return RunInfo{}, fmt.Errorf("register run %q: %w", info.Run, err)
	}
	return out, nil
}

// readRun reads a run's row.
func readRun(ctx context.Context, q querier, run string) (RunInfo, error) {
	info := RunInfo{Run: run}
	var orders, created string
	err := q.QueryRowContext(ctx, `SELECT delta, bound, orders, entries, created_at FROM runs WHERE run = $1`, run).
		Scan(&info.Delta, &info.Bound, &orders, &info.Entries, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return RunInfo{}, fmt.Errorf("%w %q", ErrUnknownRun, run)
	}
	if err != nil {
		return RunInfo{}, err
	}
	if info.Orders, err = parseOrders(orders); err != nil {
		return RunInfo{}, fmt.Errorf("%w: run %q: %v", ErrCorrupt, run, err)
	}
	if info.Created, err = parseTime(created); err != nil {
		return RunInfo{}, fmt.Errorf("%w: run %q: created_at: %v", ErrCorrupt, run, err)
	}
	return info, nil
}

// Run implements Store.
func (s *SQLiteStore) Run(ctx context.Context, run string) (info RunInfo, err error) {
	err = retryBusy(ctx, s.busy, func() error {
		info, err = readRun(ctx, s.db, run)
		return err
	})
	return info, err
}

// Runs implements Store.
func (s *SQLiteStore) Runs(ctx context.Context) (runs []string, err error) {
	err = retryBusy(ctx, s.busy, func() error {
		runs, err = s.runs(ctx)
		return err
	})
	return runs, err
}

func (s *SQLiteStore) runs(ctx context.Context) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT run FROM runs ORDER BY run`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var r string
		if err := rows.Scan(&r); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// Append implements Store. The transaction is: read the run's entry count;
// INSERT the entry ON CONFLICT (run, round) DO NOTHING; if nothing was
// inserted, compare with the stored entry and roll back; otherwise check
// seen against the count and UPDATE the count where it is still the one
// read (PostgreSQL re-checks that condition after a concurrent writer
// commits), and commit.
func (s *SQLiteStore) Append(ctx context.Context, e Entry, seen int64) (bool, error) {
	if err := e.Validate(); err != nil {
		return false, err
	}
	text, err := EncodeEvent(e.Event)
	if err != nil {
		return false, err
	}
	e.Time = e.Time.Round(0).UTC()
	existed := false
	err = s.tx(ctx, func(tx *sql.Tx) error {
		var count int64
		err := tx.QueryRowContext(ctx, `SELECT entries FROM runs WHERE run = $1`, e.Run).Scan(&count)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w %q (register it first)", ErrUnknownRun, e.Run)
		}
		if err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO entries (run, round, mechanism, event, reports, digest, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (run, round) DO NOTHING`,
			e.Run, e.Round, e.Event.Mechanism, text, e.Reports, e.Digest.String(), formatTime(e.Time))
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			old, err := readEntry(ctx, tx, e.Run, e.Round)
			if err != nil {
				return err
			}
			if !old.same(e) {
				return conflictError(old, e)
			}
			existed = true
			return errRollback
		}
		if seen >= 0 && seen != count {
			return fmt.Errorf("%w (run %q has %d entries, caller has seen %d)", ErrStale, e.Run, count, seen)
		}
		res, err = tx.ExecContext(ctx, `UPDATE runs SET entries = entries + 1 WHERE run = $1 AND entries = $2`, e.Run, count)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n != 1 {
			return fmt.Errorf("%w (run %q changed during the transaction)", ErrStale, e.Run)
		}
		faultpoint.Hit(PointAppendInTransaction)
		return nil
	})
	if errors.Is(err, errRollback) {
		return existed, nil
	}
	if err != nil {
		return false, fmt.Errorf("append run %q round %d: %w", e.Run, e.Round, err)
	}
	faultpoint.Hit(PointAppendCommitted)
	return false, nil
}

// errRollback ends a transaction that must write nothing without failing.
var errRollback = errors.New("rollback")

const entryColumns = `round, mechanism, event, reports, digest, created_at`

type scanner interface{ Scan(dest ...any) error }

// scanEntry decodes one row of entryColumns.
func scanEntry(run string, row scanner) (Entry, error) {
	e := Entry{Run: run}
	var mechanism, text, digest, created string
	var reports int64
	if err := row.Scan(&e.Round, &mechanism, &text, &reports, &digest, &created); err != nil {
		return Entry{}, err
	}
	var err error
	if e.Event, err = DecodeEvent(text); err != nil {
		return Entry{}, fmt.Errorf("%w: run %q round %d: %v", ErrCorrupt, run, e.Round, err)
	}
	if e.Event.Mechanism != mechanism {
		return Entry{}, fmt.Errorf("%w: run %q round %d: mechanism column %q, event says %q", ErrCorrupt, run, e.Round, mechanism, e.Event.Mechanism)
	}
	if e.Digest, err = ParseDigest(digest); err != nil {
		return Entry{}, fmt.Errorf("%w: run %q round %d: %v", ErrCorrupt, run, e.Round, err)
	}
	if e.Time, err = parseTime(created); err != nil {
		return Entry{}, fmt.Errorf("%w: run %q round %d: created_at: %v", ErrCorrupt, run, e.Round, err)
	}
	e.Reports = int(reports)
	if int64(e.Reports) != reports {
		return Entry{}, fmt.Errorf("%w: run %q round %d: reports %d overflows int", ErrCorrupt, run, e.Round, reports)
	}
	if err := e.Validate(); err != nil {
		return Entry{}, fmt.Errorf("%w: run %q round %d: %v", ErrCorrupt, run, e.Round, err)
	}
	return e, nil
}

func readEntry(ctx context.Context, q querier, run string, round int64) (Entry, error) {
	return scanEntry(run, q.QueryRowContext(ctx, `SELECT `+entryColumns+` FROM entries WHERE run = $1 AND round = $2`, run, round))
}

// Entries implements Store.
func (s *SQLiteStore) Entries(ctx context.Context, run string) (entries []Entry, err error) {
	err = retryBusy(ctx, s.busy, func() error {
		entries, err = s.entries(ctx, run)
		return err
	})
	return entries, err
}

func (s *SQLiteStore) entries(ctx context.Context, run string) ([]Entry, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+entryColumns+` FROM entries WHERE run = $1 ORDER BY round`, run)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Entry
	for rows.Next() {
		e, err := scanEntry(run, rows)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// Check implements Store: PRAGMA integrity_check and foreign_key_check,
// the schema version, every entry decodes to a valid entry, and every
// run's entry count equals its number of entries.
func (s *SQLiteStore) Check(ctx context.Context) error {
	if err := s.pragmaCheck(ctx, `PRAGMA integrity_check`, "ok"); err != nil {
		return err
	}
	if err := s.pragmaCheck(ctx, `PRAGMA foreign_key_check`, ""); err != nil {
		return err
	}
	if err := s.checkVersion(ctx, s.db); err != nil {
		return fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	runs, err := s.Runs(ctx)
	if err != nil {
		return err
	}
	for _, run := range runs {
		info, err := readRun(ctx, s.db, run)
		if err != nil {
			return err
		}
		if _, err := info.normalize(); err != nil {
			return fmt.Errorf("%w: run %q: %v", ErrCorrupt, run, err)
		}
		entries, err := s.Entries(ctx, run)
		if err != nil {
			return err
		}
		if int64(len(entries)) != info.Entries {
			return fmt.Errorf("%w: run %q counts %d entries but has %d", ErrCorrupt, run, info.Entries, len(entries))
		}
	}
	var orphans int64
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM entries WHERE run NOT IN (SELECT run FROM runs)`).Scan(&orphans); err != nil {
		return err
	}
	if orphans != 0 {
		return fmt.Errorf("%w: %d entries of unregistered runs", ErrCorrupt, orphans)
	}
	return nil
}

// pragmaCheck runs a checking pragma and fails unless its rows are exactly
// one row want (want "" means: no rows).
func (s *SQLiteStore) pragmaCheck(ctx context.Context, pragma, want string) error {
	rows, err := s.db.QueryContext(ctx, pragma)
	if err != nil {
		return fmt.Errorf("%s: %w", pragma, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	var got []string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return fmt.Errorf("%s: %w", pragma, err)
		}
		line := ""
		for i, v := range vals {
			if i > 0 {
				line += " "
			}
			line += v.String
		}
		got = append(got, line)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("%s: %w", pragma, err)
	}
	if (want == "" && len(got) == 0) || (len(got) == 1 && got[0] == want) {
		return nil
	}
	return fmt.Errorf("%w: %s: %q", ErrCorrupt, pragma, got)
}

// Close implements Store.
func (s *SQLiteStore) Close() error { return s.db.Close() }
