package ledger

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/shuffledp/shuffledp/internal/faultpoint"
	"modernc.org/sqlite" // registers the pure-Go "sqlite" driver
)

// FileName is the name of the ledger database inside a state directory.
const FileName = "ledger.db"

// SchemaVersion is the version of the SQL schema this package writes, in
// SQLite and in PostgreSQL alike: 1, the runs and their entries; 2, the
// report IDs of ReportIDStore. Opening a database of an older version for
// writing migrates it, in one transaction, and records the new version in
// its meta table; a database of a newer version is refused, never
// misread. A read-only open reads versions MinSchemaVersion to
// SchemaVersion and changes nothing.
const SchemaVersion = 2

// MinSchemaVersion is the oldest schema version this package reads.
const MinSchemaVersion = 1

// Fault points of the durable stores' Append and ClaimReportIDs (package
// internal/faultpoint), for crash tests that kill the process inside a
// debit or a claim.
const (
	// PointAppendInTransaction: the entry is inserted and the run's count
	// updated, the transaction not committed. A kill here writes nothing.
	PointAppendInTransaction = "ledger.append.in-transaction"
	// PointAppendCommitted: the transaction is committed, Append has not
	// returned. A kill here leaves the entry durable although its caller
	// never learnt it (a restart finds it; a retry is idempotent).
	PointAppendCommitted = "ledger.append.committed"
	// PointClaimInTransaction: ClaimReportIDs has inserted the new ids,
	// the transaction is not committed. A kill here records none of them.
	PointClaimInTransaction = "ledger.claim.in-transaction"
	// PointClaimCommitted: the claim is committed, ClaimReportIDs has not
	// returned. A kill here leaves every id recorded; a re-claim of the
	// round finds them (no replays).
	PointClaimCommitted = "ledger.claim.committed"
)

// application identifies a shuffledp ledger in the meta table.
const application = "shuffledp-ledger"

// schema creates the tables of schema version 1. It is plain SQL that
// PostgreSQL also accepts: the (run, round) key is a UNIQUE constraint,
// times are RFC 3339 text in UTC (nanoseconds kept), events JSON text,
// digests hexadecimal text.
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

// sqliteMigrations[v] takes an SQLite ledger from schema version v to v+1
// (migrations[0] is the version 1 schema itself).
var sqliteMigrations = [][]string{
	schema,
	// 2: the report IDs of ReportIDStore, keyed (run, id); no rowid, so
	// the key is the table.
	{`CREATE TABLE IF NOT EXISTS report_ids (
		run   TEXT NOT NULL,
		id    BLOB NOT NULL CHECK (typeof(id) = 'blob' AND length(id) = 16),
		round BIGINT NOT NULL CHECK (round >= 0),
		PRIMARY KEY (run, id)
	) WITHOUT ROWID`},
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

// init creates or migrates the schema and checks its version.
func (s *SQLiteStore) init(ctx context.Context) error {
	if s.readOnly {
		_, err := readVersion(ctx, s.db)
		return err
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		var tables int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'`).Scan(&tables); err != nil {
			return err
		}
		version := 0
		if tables > 0 {
			v, err := readVersion(ctx, tx)
			if err != nil {
				return err
			}
			version = v
		}
		for v := version; v < SchemaVersion; v++ {
			for _, stmt := range sqliteMigrations[v] {
				if _, err := tx.ExecContext(ctx, stmt); err != nil {
					return fmt.Errorf("migrating the schema to version %d: %w", v+1, err)
				}
			}
			if v == 0 {
				if _, err := tx.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES ('application', $1)`, application); err != nil {
					return fmt.Errorf("writing meta: %w", err)
				}
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES ('schema_version', $1)
				ON CONFLICT (key) DO UPDATE SET value = excluded.value`, strconv.Itoa(v+1)); err != nil {
				return fmt.Errorf("writing meta: %w", err)
			}
		}
		_, err := readVersion(ctx, tx)
		return err
	})
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// readVersion returns the schema version of a ledger database, refusing
// one that is not a shuffledp ledger or whose version this package cannot
// read (older than MinSchemaVersion or newer than SchemaVersion).
func readVersion(ctx context.Context, q querier) (int, error) {
	var app, version string
	if err := q.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'application'`).Scan(&app); err != nil {
		return 0, fmt.Errorf("not a shuffledp ledger (no meta table): %w", err)
	}
	if app != application {
		return 0, fmt.Errorf("not a shuffledp ledger (application %q)", app)
	}
	if err := q.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'schema_version'`).Scan(&version); err != nil {
		return 0, fmt.Errorf("reading schema version: %w", err)
	}
	return checkVersion(app, version)
}

// checkVersion parses the meta table's application and schema_version.
func checkVersion(app, version string) (int, error) {
	if app != application {
		return 0, fmt.Errorf("not a shuffledp ledger (application %q)", app)
	}
	v, err := strconv.Atoi(version)
	if err != nil || v < MinSchemaVersion || v > SchemaVersion {
		return 0, fmt.Errorf("ledger schema version %s, this program reads versions %d to %d", version, MinSchemaVersion, SchemaVersion)
	}
	return v, nil
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

// String returns the database file's absolute path.
func (s *SQLiteStore) String() string { return s.path }

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
	info, err := scanRun(run, q.QueryRowContext(ctx, `SELECT `+runColumns+` FROM runs WHERE run = $1`, run))
	if errors.Is(err, sql.ErrNoRows) {
		return RunInfo{}, fmt.Errorf("%w %q", ErrUnknownRun, run)
	}
	return info, err
}

const runColumns = `delta, bound, orders, entries, created_at`

// scanRun decodes one row of runColumns.
func scanRun(run string, row scanner) (RunInfo, error) {
	info := RunInfo{Run: run}
	var orders, created string
	err := row.Scan(&info.Delta, &info.Bound, &orders, &info.Entries, &created)
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

// rowIterator is what database/sql's *Rows and pgx's Rows have in common.
type rowIterator interface {
	scanner
	Next() bool
	Err() error
}

// scanEntries decodes every remaining row of entryColumns; the caller
// closes rows.
func scanEntries(run string, rows rowIterator) ([]Entry, error) {
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
	return scanEntries(run, rows)
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
	version, err := readVersion(ctx, s.db)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if err := checkRuns(ctx, s); err != nil {
		return err
	}
	var orphans int64
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM entries WHERE run NOT IN (SELECT run FROM runs)`).Scan(&orphans); err != nil {
		return err
	}
	if orphans != 0 {
		return fmt.Errorf("%w: %d entries of unregistered runs", ErrCorrupt, orphans)
	}
	if version >= 2 {
		var bad int64
		if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM report_ids
			WHERE typeof(id) <> 'blob' OR length(id) <> 16 OR round < 0`).Scan(&bad); err != nil {
			return err
		}
		if bad != 0 {
			return fmt.Errorf("%w: %d malformed report IDs", ErrCorrupt, bad)
		}
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

// ClaimReportIDs implements ReportIDStore in one write transaction: the
// ids already recorded for run are looked up through the (run, id) key,
// and the others inserted, each statement taking the whole list as one
// JSON array of hexadecimal strings (json_each), so that a claim of 10,000
// ids is two statements, not 10,000.
func (s *SQLiteStore) ClaimReportIDs(ctx context.Context, run string, round int64, ids [][16]byte) ([][16]byte, error) {
	if err := validateClaim(run, round); err != nil {
		return nil, err
	}
	if s.readOnly {
		return nil, errors.New("ledger: claim report IDs: the store is open read-only")
	}
	if len(ids) == 0 {
		return nil, nil
	}
	unique, dup := claimPlan(ids)
	// In key order, lookups and inserts walk the B-tree's pages in order.
	sorted := slices.SortedFunc(slices.Values(unique), func(a, b [16]byte) int { return bytes.Compare(a[:], b[:]) })
	var other map[[16]byte]bool
	err := s.tx(ctx, func(tx *sql.Tx) error {
		other = nil
		rows, err := tx.QueryContext(ctx, `SELECT id, round FROM report_ids
			WHERE run = $1 AND id IN (SELECT unhex(value) FROM json_each($2))`, run, hexList(sorted))
		if err != nil {
			return err
		}
		defer rows.Close()
		recorded := map[[16]byte]bool{}
		for rows.Next() {
			var b []byte
			var r int64
			if err := rows.Scan(&b, &r); err != nil {
				return err
			}
			if len(b) != 16 {
				return fmt.Errorf("%w: report ID of %d bytes", ErrCorrupt, len(b))
			}
			id := [16]byte(b)
			recorded[id] = true
			if r != round {
				if other == nil {
					other = map[[16]byte]bool{}
				}
				other[id] = true
			}
		}
		if err := rows.Err(); err != nil {
			return err
		}
		rows.Close()
		fresh := sorted
		if len(recorded) > 0 {
			fresh = make([][16]byte, 0, len(sorted)-len(recorded))
			for _, id := range sorted {
				if !recorded[id] {
					fresh = append(fresh, id)
				}
			}
		}
		if len(fresh) == 0 {
			return nil
		}
		if _, err = tx.ExecContext(ctx, `INSERT INTO report_ids (run, id, round)
			SELECT $1, unhex(value), $2 FROM json_each($3)`, run, round, hexList(fresh)); err != nil {
			return err
		}
		faultpoint.Hit(PointClaimInTransaction)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("claim report IDs of run %q round %d: %w", run, round, err)
	}
	faultpoint.Hit(PointClaimCommitted)
	return claimReplays(ids, dup, other), nil
}

// hexList encodes ids as a JSON array of hexadecimal strings.
func hexList(ids [][16]byte) string {
	b := make([]byte, 0, 2+len(ids)*35)
	b = append(b, '[')
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = hex.AppendEncode(b, id[:])
		b = append(b, '"')
	}
	return string(append(b, ']'))
}
