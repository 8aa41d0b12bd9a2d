package ledger

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/shuffledp/shuffledp/internal/faultpoint"
)

// SchemaVersion is the version of the SQL schema this package writes, in
// SQLite and in PostgreSQL alike: 1, the runs and their entries; 2, the
// report IDs of ReportIDStore; 3, an index of the report IDs by (run,
// round), by which a debit deletes the IDs of the rounds below it
// (pruneTx), and, once, the deletion of the IDs a version-2 ledger kept
// of rounds below each run's last debited round; 4, a round's report IDs
// in one row (report_id_rounds: run, round, the IDs concatenated), so that
// a round's claim writes one row and its deletion deletes one; 5, the
// fences' epochs (table fences, Fencer), which a fenced debit checks in
// its transaction. Opening a database of an older version for
// writing migrates it, in one transaction, and records the new version in
// its meta table; a database of a newer version is refused, never
// misread. A read-only open reads versions MinSchemaVersion to
// SchemaVersion and changes nothing.
const SchemaVersion = 5

// MinSchemaVersion is the oldest schema version this package reads.
const MinSchemaVersion = 1

// Fault points of SQLStore's Append and ClaimReportIDs (package
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
	// PointPruneInTransaction: AppendClaiming has claimed the round's ids,
	// appended its entry and deleted the ids of earlier rounds, the
	// transaction is not committed. A kill here writes none of it: the
	// earlier rounds' ids stay.
	PointPruneInTransaction = "ledger.prune.in-transaction"
)

// application identifies a shuffledp ledger in the meta table.
const application = "shuffledp-ledger"

// schema creates the tables of schema version 1, in SQL that SQLite and
// PostgreSQL both accept: the (run, round) key is a UNIQUE constraint,
// times are RFC 3339 text in UTC (nanoseconds kept), events JSON text,
// digests hexadecimal text. Version 2's report_ids table is the dialect's
// (dialect.go).
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

// SQLStore is a Store and ReportIDStore in an SQL database through
// database/sql: an SQLite file (OpenSQLite, the pure-Go driver
// modernc.org/sqlite) or a PostgreSQL database that several shufflers on
// several machines may share (OpenPostgres, pgx's database/sql driver).
// The statements are the same for both; what differs (the report-ID
// table's column type, row locks, which errors are retried, the integrity
// check) is the store's dialect, in dialect.go.
//
// Every write is one transaction. Append's is: read the run's entry count
// (in PostgreSQL locking the run's row, SELECT ... FOR UPDATE; in SQLite
// the transaction holds the database's write lock from its start, BEGIN
// IMMEDIATE), so debits of one run are serialized and the count compared
// with seen is the committed one; INSERT the entry ON CONFLICT (run,
// round) DO NOTHING; if nothing was inserted, compare with the stored
// entry and roll back; otherwise check seen against the count, UPDATE the
// count where it is still the one read, and commit. Of two shufflers
// racing for a run, one waits for the other and then sees its entry
// (ErrStale, or ErrConflict / existed for the same round); the UNIQUE
// (run, round) key decides between writers in any case.
//
// Durability: a debit returns after its commit is on stable storage. In
// SQLite the database runs in WAL mode with synchronous=FULL, so the
// transaction is fsynced to the write-ahead log before the commit returns
// (https://www.sqlite.org/atomiccommit.html); in PostgreSQL the commit
// returns after the server flushed its WAL (synchronous_commit on, the
// default). A process killed inside a transaction writes nothing (SQLite
// rolls the journal back, PostgreSQL's server rolls back the transaction
// of a dropped connection). If the connection to PostgreSQL fails while a
// COMMIT is in flight, Append returns an error although the entry may be
// committed: the caller then does not release the batch, and the round may
// be counted without a release, never released without being counted; a
// retry finds the entry (existed).
type SQLStore struct {
	db       *sql.DB
	d        *dialect
	name     string // the file's absolute path, or the URL without its password
	readOnly bool
}

var _ Backend = (*SQLStore)(nil)

// openSQL returns the store of db, creating or migrating its schema unless
// readOnly, and checking its version.
func openSQL(ctx context.Context, db *sql.DB, d *dialect, name string, readOnly bool) (*SQLStore, error) {
	s := &SQLStore{db: db, d: d, name: name, readOnly: readOnly}
	if err := s.init(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// String returns the database file's absolute path, or the PostgreSQL URL
// without its password.
func (s *SQLStore) String() string { return s.name }

// init creates or migrates the schema (under the dialect's migration lock)
// and checks its version.
func (s *SQLStore) init(ctx context.Context) error {
	if s.readOnly {
		return s.retry(ctx, func() error {
			_, err := s.version(ctx, s.db)
			return err
		})
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		if s.d.migrationLock != "" {
			if _, err := tx.ExecContext(ctx, s.d.migrationLock); err != nil {
				return err
			}
		}
		var exists bool
		if err := tx.QueryRowContext(ctx, s.d.metaExists).Scan(&exists); err != nil {
			return err
		}
		version := 0
		if exists {
			v, err := s.version(ctx, tx)
			if err != nil {
				return err
			}
			version = v
		}
		for v := version; v < SchemaVersion; v++ {
			for _, stmt := range s.d.migrations[v] {
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
		if _, err := s.version(ctx, tx); err != nil {
			return err
		}
		return ensureIdentity(ctx, tx)
	})
}

// querier is what *sql.DB and *sql.Tx have in common.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// version returns the schema version of a ledger database, refusing one
// that is not a shuffledp ledger or whose version this package cannot read
// (older than MinSchemaVersion or newer than SchemaVersion).
func (s *SQLStore) version(ctx context.Context, q querier) (int, error) {
	var exists bool
	if err := q.QueryRowContext(ctx, s.d.metaExists).Scan(&exists); err != nil {
		return 0, err
	}
	if !exists {
		return 0, errors.New("not a shuffledp ledger (no meta table)")
	}
	var app, version string
	if err := q.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'application'`).Scan(&app); err != nil {
		return 0, fmt.Errorf("not a shuffledp ledger (no application in the meta table): %w", err)
	}
	if app != application {
		return 0, fmt.Errorf("not a shuffledp ledger (application %q)", app)
	}
	if err := q.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'schema_version'`).Scan(&version); err != nil {
		return 0, fmt.Errorf("reading schema version: %w", err)
	}
	v, err := strconv.Atoi(version)
	if err != nil || v < MinSchemaVersion || v > SchemaVersion {
		return 0, fmt.Errorf("ledger schema version %s, this program reads versions %d to %d", version, MinSchemaVersion, SchemaVersion)
	}
	return v, nil
}

// retry runs f until it returns nil or an error the dialect does not call
// transient (nothing of the failed attempt was written), within the
// dialect's attempts and time, backing off from 1 ms to 50 ms.
func (s *SQLStore) retry(ctx context.Context, f func() error) error {
	deadline := time.Now().Add(s.d.retryFor)
	wait := time.Millisecond
	for attempt := 1; ; attempt++ {
		err := f()
		if err == nil || !s.d.transient(err) ||
			(s.d.maxAttempts > 0 && attempt >= s.d.maxAttempts) || (s.d.retryFor > 0 && time.Now().After(deadline)) {
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

// tx runs f in one transaction, committing if f returns nil and rolling
// back otherwise; a transaction that fails transiently is retried whole.
func (s *SQLStore) tx(ctx context.Context, f func(*sql.Tx) error) error {
	return s.retry(ctx, func() error { return s.tx1(ctx, f) })
}

func (s *SQLStore) tx1(ctx context.Context, f func(*sql.Tx) error) (err error) {
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

func (s *SQLStore) writable(op string) error {
	if s.readOnly {
		return fmt.Errorf("ledger %s: %s: the store is open read-only", s.name, op)
	}
	return nil
}

// Register implements Store.
func (s *SQLStore) Register(ctx context.Context, info RunInfo) (RunInfo, error) {
	info, err := info.normalize()
	if err != nil {
		return RunInfo{}, err
	}
	if err := s.writable("register"); err != nil {
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
func (s *SQLStore) Run(ctx context.Context, run string) (info RunInfo, err error) {
	err = s.retry(ctx, func() error {
		info, err = readRun(ctx, s.db, run)
		return err
	})
	return info, err
}

// Runs implements Store.
func (s *SQLStore) Runs(ctx context.Context) (runs []string, err error) {
	err = s.retry(ctx, func() error {
		runs, err = s.runs(ctx)
		return err
	})
	return runs, err
}

func (s *SQLStore) runs(ctx context.Context) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT run FROM runs ORDER BY run`+s.d.byteOrder)
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

// Append implements Store, in the transaction SQLStore describes.
func (s *SQLStore) Append(ctx context.Context, e Entry, seen int64) (bool, error) {
	text, err := s.prepareAppend(&e)
	if err != nil {
		return false, err
	}
	existed := false
	err = s.tx(ctx, func(tx *sql.Tx) (err error) {
		existed, err = s.appendTx(ctx, tx, e, text, seen)
		return err
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

// prepareAppend validates e, rounds its time, and returns its event's text.
func (s *SQLStore) prepareAppend(e *Entry) (string, error) {
	if err := e.Validate(); err != nil {
		return "", err
	}
	text, err := EncodeEvent(e.Event)
	if err != nil {
		return "", err
	}
	if err := s.writable("append"); err != nil {
		return "", err
	}
	e.Time = e.Time.Round(0).UTC()
	return text, nil
}

// appendTx is Append's transaction: existed and errRollback when the
// entry is there already, nothing written.
func (s *SQLStore) appendTx(ctx context.Context, tx *sql.Tx, e Entry, text string, seen int64) (bool, error) {
	var count int64
	err := tx.QueryRowContext(ctx, `SELECT entries FROM runs WHERE run = $1`+s.d.lockRow, e.Run).Scan(&count)
	if errors.Is(err, sql.ErrNoRows) {
		return false, fmt.Errorf("%w %q (register it first)", ErrUnknownRun, e.Run)
	}
	if err != nil {
		return false, err
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO entries (run, round, mechanism, event, reports, digest, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (run, round) DO NOTHING`,
		e.Run, e.Round, e.Event.Mechanism, text, int64(e.Reports), e.Digest.String(), formatTime(e.Time))
	if err != nil {
		return false, err
	}
	if n, err := res.RowsAffected(); err != nil {
		return false, err
	} else if n == 0 {
		old, err := readEntry(ctx, tx, e.Run, e.Round)
		if err != nil {
			return false, err
		}
		if !old.same(e) {
			return false, conflictError(old, e)
		}
		return true, errRollback
	}
	if seen >= 0 && seen != count {
		return false, fmt.Errorf("%w (run %q has %d entries, caller has seen %d)", ErrStale, e.Run, count, seen)
	}
	res, err = tx.ExecContext(ctx, `UPDATE runs SET entries = entries + 1 WHERE run = $1 AND entries = $2`, e.Run, count)
	if err != nil {
		return false, err
	}
	if n, err := res.RowsAffected(); err != nil {
		return false, err
	} else if n != 1 {
		return false, fmt.Errorf("%w (run %q changed during the transaction)", ErrStale, e.Run)
	}
	faultpoint.Hit(PointAppendInTransaction)
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
func (s *SQLStore) Entries(ctx context.Context, run string) (entries []Entry, err error) {
	err = s.retry(ctx, func() error {
		entries, err = s.entries(ctx, run)
		return err
	})
	return entries, err
}

func (s *SQLStore) entries(ctx context.Context, run string) ([]Entry, error) {
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

// Check implements Store: the schema version; the dialect's own check (in
// SQLite PRAGMA integrity_check and foreign_key_check and the report IDs'
// form, in PostgreSQL that the constraints which make debits and claims
// unique are present and validated); every entry decodes to a valid entry;
// every run's entry count equals its number of entries; no entry belongs
// to an unregistered run.
func (s *SQLStore) Check(ctx context.Context) error {
	version, err := s.version(ctx, s.db)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if err := s.d.check(ctx, s.db, version); err != nil {
		return err
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
	return nil
}

// Close implements Store.
func (s *SQLStore) Close() error { return s.db.Close() }

// ClaimReportIDs implements ReportIDStore in one transaction of at most
// three statements whatever the number of ids (from schema version 4, a
// round's IDs are one row of report_id_rounds, their 16-byte values
// concatenated): the dialect's claim lock (PostgreSQL: an advisory lock of
// the run, so that claims of one run are serialized; SQLite's transaction
// holds the write lock throughout), a SELECT of the run's stored rounds,
// compared with ids in memory, and one INSERT ... ON CONFLICT (run, round)
// DO UPDATE of the round's row with its IDs and the new ones. Every id thus
// ends up claimed by exactly one round. The stored rounds are what the
// debits left (AppendClaiming deletes the rounds below the one it debits):
// the last debited round's IDs, about one batch, however long the run.
func (s *SQLStore) ClaimReportIDs(ctx context.Context, run string, round int64, ids [][16]byte) ([][16]byte, error) {
	if err := validateClaim(run, round); err != nil {
		return nil, err
	}
	if err := s.writable("claim report IDs"); err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, nil
	}
	unique, dup := claimPlan(ids)
	var other map[[16]byte]bool
	err := s.tx(ctx, func(tx *sql.Tx) (err error) {
		other, err = s.claimTx(ctx, tx, run, round, unique)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("claim report IDs of run %q round %d: %w", run, round, err)
	}
	faultpoint.Hit(PointClaimCommitted)
	return claimReplays(ids, dup, other), nil
}

// claimTx is ClaimReportIDs' transaction for the distinct ids unique: it
// records those of unique not yet stored for run under round, and returns
// those recorded under another round of run (not recorded again).
func (s *SQLStore) claimTx(ctx context.Context, tx *sql.Tx, run string, round int64, unique [][16]byte) (map[[16]byte]bool, error) {
	if s.d.claimLock != "" {
		if _, err := tx.ExecContext(ctx, s.d.claimLock, run); err != nil {
			return nil, err
		}
	}
	// fresh[id]: id is to be recorded (not found stored so far).
	fresh := make(map[[16]byte]bool, len(unique))
	for _, id := range unique {
		fresh[id] = true
	}
	rows, err := tx.QueryContext(ctx, `SELECT round, ids FROM report_id_rounds WHERE run = $1`, run)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var mine []byte // the IDs stored under round itself
	var other map[[16]byte]bool
	for rows.Next() {
		var r int64
		var b []byte
		if err := rows.Scan(&r, &b); err != nil {
			return nil, err
		}
		if len(b)%16 != 0 {
			return nil, fmt.Errorf("%w: report IDs of run %q round %d: %d bytes, not a multiple of 16", ErrCorrupt, run, r, len(b))
		}
		for i := 0; i < len(b); i += 16 {
			id := [16]byte(b[i : i+16])
			if !fresh[id] {
				continue
			}
			fresh[id] = false
			if r != round {
				if other == nil {
					other = map[[16]byte]bool{}
				}
				other[id] = true
			}
		}
		if r == round {
			mine = b
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows.Close()
	all := slices.Grow(mine, 16*len(unique))
	for _, id := range unique {
		if fresh[id] {
			all = append(all, id[:]...)
		}
	}
	if len(all) == len(mine) {
		return other, nil
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO report_id_rounds (run, round, ids) VALUES ($1, $2, $3)
		ON CONFLICT (run, round) DO UPDATE SET ids = excluded.ids`, run, round, all); err != nil {
		return nil, err
	}
	faultpoint.Hit(PointClaimInTransaction)
	return other, nil
}

// AppendClaiming implements ClaimAppender: claimTx, appendTx and pruneTx
// in one transaction, so that a released round costs one commit (one
// fsync), and the report IDs of the rounds below it are deleted in that
// commit (a rolled-back debit deletes none).
func (s *SQLStore) AppendClaiming(ctx context.Context, e Entry, seen int64, ids [][16]byte) (bool, [][16]byte, error) {
	return s.appendClaiming(ctx, e, seen, true, ids, nil)
}

// appendClaiming is AppendClaiming (claim) or Append (!claim, ids nil),
// under fence if not nil (fenceTx first in the transaction).
func (s *SQLStore) appendClaiming(ctx context.Context, e Entry, seen int64, claim bool, ids [][16]byte, fence *Fence) (bool, [][16]byte, error) {
	text, err := s.prepareAppend(&e)
	if err != nil {
		return false, nil, err
	}
	unique, dup := claimPlan(ids)
	if dup != nil {
		return false, claimReplays(ids, dup, nil), nil
	}
	var existed bool
	var replays [][16]byte
	err = s.tx(ctx, func(tx *sql.Tx) error {
		existed, replays = false, nil
		if fence != nil {
			if err := fenceTx(ctx, tx, *fence); err != nil {
				return err
			}
		}
		if len(unique) > 0 {
			other, err := s.claimTx(ctx, tx, e.Run, e.Round, unique)
			if err != nil {
				return err
			}
			if other != nil {
				replays = claimReplays(ids, nil, other)
				return errRollback
			}
		}
		var err error
		if existed, err = s.appendTx(ctx, tx, e, text, seen); err != nil || !claim {
			return err
		}
		return s.pruneTx(ctx, tx, e.Run, e.Round)
	})
	switch {
	case errors.Is(err, errRollback):
		return existed, replays, nil
	case err != nil && !claim:
		return false, nil, fmt.Errorf("append run %q round %d: %w", e.Run, e.Round, err)
	case err != nil:
		return false, nil, fmt.Errorf("append run %q round %d with %d report IDs: %w", e.Run, e.Round, len(ids), err)
	}
	faultpoint.Hit(PointAppendCommitted)
	return false, nil, nil
}

// pruneTx deletes, inside the debit of round of run, the report IDs of
// run recorded under rounds below it: rounds that are closed, since the
// ledger debits a round only above every debited round. A report of such a
// round is sealed for it (its round is in the HPKE associated data) and
// does not open at the server in any later round, so its ID need not be
// kept; the store then holds the IDs of the last debited round (and of
// any later round claimed by ClaimReportIDs), however long the run. See
// docs/report-ids.md for the argument. A round's IDs are one row, so this
// deletes one row per round.
func (s *SQLStore) pruneTx(ctx context.Context, tx *sql.Tx, run string, round int64) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM report_id_rounds WHERE run = $1 AND round < $2`, run, round); err != nil {
		return err
	}
	faultpoint.Hit(PointPruneInTransaction)
	return nil
}

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
