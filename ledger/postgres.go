package ledger

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shuffledp/shuffledp/internal/faultpoint"
)

// postgresMigrations[v] takes a PostgreSQL ledger from schema version v to
// v+1. Version 1 is SQLite's schema unchanged; version 2 keeps report IDs
// as uuid, PostgreSQL's 16-byte type, under the key (id, run): random ids
// first, so that comparisons in the index are decided by the id and not
// by the run shared by every row (measured, interleaved on one server: 59
// ms of server CPU per 10,000-id INSERT ... ON CONFLICT, against 67 ms with
// (run, id)).
var postgresMigrations = [][]string{
	schema,
	{`CREATE TABLE IF NOT EXISTS report_ids (
		run   TEXT NOT NULL,
		id    UUID NOT NULL,
		round BIGINT NOT NULL CHECK (round >= 0),
		PRIMARY KEY (id, run)
	)`},
}

// migrationLock is the key of the transaction-scoped advisory lock under
// which a PostgreSQL ledger's schema is created or migrated, so that
// shufflers opening one database at once migrate it once.
const migrationLock = 0x73687566666c6564 // "shuffled"

// PostgresOptions configure OpenPostgres.
type PostgresOptions struct {
	// ReadOnly opens an existing ledger for reading only: every
	// transaction is READ ONLY (default_transaction_read_only), the schema
	// is neither created nor migrated, and Register, Append and
	// ClaimReportIDs fail.
	ReadOnly bool
	// ConnectTimeout bounds each connection attempt; 0 means the URL's
	// connect_timeout, or 10 s if it has none.
	ConnectTimeout time.Duration
}

// PostgresStore is a Store and ReportIDStore in a PostgreSQL database,
// through pgx v5 and its connection pool (pgxpool); several processes
// (shufflers on several machines) may share one database.
//
// The tables are SQLite's (schema version SchemaVersion, recorded in the
// meta table and migrated on open under an advisory lock), and so are the
// semantics. Append is one READ COMMITTED transaction that first locks the
// run's row (SELECT ... FOR UPDATE): debits of one run are serialized, so
// the run's entry count that Append compares with seen is the committed
// one, and of two shufflers racing for a run one waits for the other and
// then sees its entry (ErrStale, or ErrConflict / existed for the same
// round). The UNIQUE (run, round) key decides between writers in any case.
// Durability is the server's: a commit returns after the WAL is flushed
// (synchronous_commit on, PostgreSQL's default). A client killed or cut off
// inside a transaction writes nothing (the server rolls it back). If the
// connection fails while a COMMIT is in flight, Append returns an error
// although the entry may be committed: the caller then does not release
// the batch, and the round may be counted without a release, never
// released without being counted; a retry finds the entry (existed).
type PostgresStore struct {
	pool     *pgxpool.Pool
	name     string // the URL with its password redacted
	readOnly bool
}

var _ Backend = (*PostgresStore)(nil)

// IsPostgresURL reports whether target is a PostgreSQL connection URL (its
// scheme is postgres or postgresql, in any case).
func IsPostgresURL(target string) bool {
	scheme, _, ok := strings.Cut(target, "://")
	return ok && (strings.EqualFold(scheme, "postgres") || strings.EqualFold(scheme, "postgresql"))
}

// redactURL returns a URL for messages, without its password.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "postgres://(unparsable URL)"
	}
	q := u.Query()
	if q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

// OpenPostgres connects to the PostgreSQL database at connURL (a
// postgres:// or postgresql:// URL, in the form libpq and pgx accept:
// postgres://user:password@host:port/database?sslmode=...; parameters such
// as search_path and pool_max_conns pass through), creating or migrating
// the ledger's schema unless opts.ReadOnly.
func OpenPostgres(ctx context.Context, connURL string, opts PostgresOptions) (*PostgresStore, error) {
	name := redactURL(connURL)
	if !IsPostgresURL(connURL) {
		return nil, fmt.Errorf("ledger %s: not a postgres:// or postgresql:// URL", name)
	}
	// pgx reads only a lower-case scheme as a URL.
	scheme, rest, _ := strings.Cut(connURL, "://")
	cfg, err := pgxpool.ParseConfig(strings.ToLower(scheme) + "://" + rest)
	if err != nil {
		return nil, fmt.Errorf("ledger %s: %v", name, redactErr(err, connURL))
	}
	if opts.ConnectTimeout > 0 {
		cfg.ConnConfig.ConnectTimeout = opts.ConnectTimeout
	} else if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = 10 * time.Second
	}
	if opts.ReadOnly {
		cfg.ConnConfig.RuntimeParams["default_transaction_read_only"] = "on"
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("ledger %s: %v", name, redactErr(err, connURL))
	}
	s := &PostgresStore{pool: pool, name: name, readOnly: opts.ReadOnly}
	if err := s.init(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("ledger %s: %v", name, redactErr(err, connURL))
	}
	return s, nil
}

// redactErr removes a password that pgx may quote from the URL.
func redactErr(err error, connURL string) error {
	u, perr := url.Parse(connURL)
	if perr != nil || u.User == nil {
		return err
	}
	if p, ok := u.User.Password(); ok && p != "" && strings.Contains(err.Error(), p) {
		return errors.New(strings.ReplaceAll(err.Error(), p, "xxxxx"))
	}
	return err
}

// String returns the store's URL, without its password.
func (s *PostgresStore) String() string { return s.name }

// init creates or migrates the schema (under the advisory lock) and checks
// its version.
func (s *PostgresStore) init(ctx context.Context) error {
	if s.readOnly {
		_, err := s.version(ctx, s.pool)
		return err
	}
	return s.tx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(migrationLock)); err != nil {
			return err
		}
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT to_regclass('meta') IS NOT NULL`).Scan(&exists); err != nil {
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
			for _, stmt := range postgresMigrations[v] {
				if _, err := tx.Exec(ctx, stmt); err != nil {
					return fmt.Errorf("migrating the schema to version %d: %w", v+1, err)
				}
			}
			if v == 0 {
				if _, err := tx.Exec(ctx, `INSERT INTO meta (key, value) VALUES ('application', $1)`, application); err != nil {
					return fmt.Errorf("writing meta: %w", err)
				}
			}
			if _, err := tx.Exec(ctx, `INSERT INTO meta (key, value) VALUES ('schema_version', $1)
				ON CONFLICT (key) DO UPDATE SET value = excluded.value`, strconv.Itoa(v+1)); err != nil {
				return fmt.Errorf("writing meta: %w", err)
			}
		}
		_, err := s.version(ctx, tx)
		return err
	})
}

// pgQuerier is what pgxpool.Pool and pgx.Tx have in common.
type pgQuerier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// version reads and checks the schema version in the meta table.
func (s *PostgresStore) version(ctx context.Context, q pgQuerier) (int, error) {
	var exists bool
	if err := q.QueryRow(ctx, `SELECT to_regclass('meta') IS NOT NULL`).Scan(&exists); err != nil {
		return 0, err
	}
	if !exists {
		return 0, errors.New("not a shuffledp ledger (no meta table)")
	}
	var app, version string
	if err := q.QueryRow(ctx, `SELECT value FROM meta WHERE key = 'application'`).Scan(&app); err != nil {
		return 0, fmt.Errorf("not a shuffledp ledger (no application in the meta table): %w", err)
	}
	if app != application {
		return 0, fmt.Errorf("not a shuffledp ledger (application %q)", app)
	}
	if err := q.QueryRow(ctx, `SELECT value FROM meta WHERE key = 'schema_version'`).Scan(&version); err != nil {
		return 0, fmt.Errorf("reading schema version: %w", err)
	}
	return checkVersion(app, version)
}

// maxTxAttempts bounds the retries of a transaction PostgreSQL aborts as a
// deadlock or serialization failure (nothing of it was written).
const maxTxAttempts = 5

// tx runs f in one READ COMMITTED transaction, committing if f returns nil
// and rolling back otherwise; a transaction aborted as a deadlock or a
// serialization failure is retried whole.
func (s *PostgresStore) tx(ctx context.Context, f func(pgx.Tx) error) error {
	for attempt := 1; ; attempt++ {
		err := pgx.BeginFunc(ctx, s.pool, f)
		var pe *pgconn.PgError
		if attempt < maxTxAttempts && errors.As(err, &pe) && (pe.Code == "40P01" || pe.Code == "40001") {
			continue
		}
		return err
	}
}

func (s *PostgresStore) writable(op string) error {
	if s.readOnly {
		return fmt.Errorf("ledger %s: %s: the store is open read-only", s.name, op)
	}
	return nil
}

// Register implements Store.
func (s *PostgresStore) Register(ctx context.Context, info RunInfo) (RunInfo, error) {
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
	err = s.tx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO runs (run, delta, bound, orders, entries, created_at)
			VALUES ($1, $2, $3, $4, 0, $5) ON CONFLICT (run) DO NOTHING`,
			info.Run, info.Delta, info.Bound, orders, formatTime(info.Created)); err != nil {
			return err
		}
		out, err = pgReadRun(ctx, tx, info.Run, "")
		return err
	})
	if err != nil {
		return RunInfo{}, fmt.Errorf("register run %q: %w", info.Run, err)
	}
	return out, nil
}

// pgReadRun reads a run's row; lock is "" or a locking clause.
func pgReadRun(ctx context.Context, q pgQuerier, run, lock string) (RunInfo, error) {
	info, err := scanRun(run, q.QueryRow(ctx, `SELECT `+runColumns+` FROM runs WHERE run = $1 `+lock, run))
	if errors.Is(err, pgx.ErrNoRows) {
		return RunInfo{}, fmt.Errorf("%w %q", ErrUnknownRun, run)
	}
	return info, err
}

// Run implements Store.
func (s *PostgresStore) Run(ctx context.Context, run string) (RunInfo, error) {
	return pgReadRun(ctx, s.pool, run, "")
}

// Runs implements Store.
func (s *PostgresStore) Runs(ctx context.Context) ([]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT run FROM runs ORDER BY run COLLATE "C"`)
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if len(out) == 0 {
		out = nil
	}
	return out, err
}

// Append implements Store. The transaction is: lock the run's row and read
// its entry count (SELECT ... FOR UPDATE; a concurrent Append of the run
// waits here until this one commits, then reads the new count); INSERT
// the entry ON CONFLICT (run, round) DO NOTHING; if nothing was inserted,
// compare with the stored entry and roll back; otherwise check seen
// against the count, increment the count, and commit.
func (s *PostgresStore) Append(ctx context.Context, e Entry, seen int64) (bool, error) {
	if err := e.Validate(); err != nil {
		return false, err
	}
	text, err := EncodeEvent(e.Event)
	if err != nil {
		return false, err
	}
	if err := s.writable("append"); err != nil {
		return false, err
	}
	e.Time = e.Time.Round(0).UTC()
	existed := false
	err = s.tx(ctx, func(tx pgx.Tx) error {
		existed = false
		info, err := pgReadRun(ctx, tx, e.Run, "FOR UPDATE")
		if errors.Is(err, ErrUnknownRun) {
			return fmt.Errorf("%w %q (register it first)", ErrUnknownRun, e.Run)
		}
		if err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `INSERT INTO entries (run, round, mechanism, event, reports, digest, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (run, round) DO NOTHING`,
			e.Run, e.Round, e.Event.Mechanism, text, int64(e.Reports), e.Digest.String(), formatTime(e.Time))
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			old, err := scanEntry(e.Run, tx.QueryRow(ctx, `SELECT `+entryColumns+` FROM entries WHERE run = $1 AND round = $2`, e.Run, e.Round))
			if err != nil {
				return err
			}
			if !old.same(e) {
				return conflictError(old, e)
			}
			existed = true
			return errRollback
		}
		if seen >= 0 && seen != info.Entries {
			return fmt.Errorf("%w (run %q has %d entries, caller has seen %d)", ErrStale, e.Run, info.Entries, seen)
		}
		tag, err = tx.Exec(ctx, `UPDATE runs SET entries = entries + 1 WHERE run = $1 AND entries = $2`, e.Run, info.Entries)
		if err != nil {
			return err
		}
		if tag.RowsAffected() != 1 {
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

// Entries implements Store.
func (s *PostgresStore) Entries(ctx context.Context, run string) ([]Entry, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+entryColumns+` FROM entries WHERE run = $1 ORDER BY round`, run)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return scanEntries(run, rows)
}

// Check implements Store: the schema version; the constraints that make
// debits unique (UNIQUE (run, round) on entries, the primary key (id, run)
// of report_ids) and the entries' foreign key are present and validated;
// every entry decodes to a valid entry; every run's entry count equals its
// number of entries; no entry belongs to an unregistered run.
func (s *PostgresStore) Check(ctx context.Context) error {
	version, err := s.version(ctx, s.pool)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	want := []struct{ table, kind, what string }{
		{"entries", "u", "the UNIQUE (run, round) key of entries"},
		{"entries", "f", "the foreign key of entries to runs"},
		{"runs", "p", "the primary key of runs"},
	}
	if version >= 2 {
		want = append(want, struct{ table, kind, what string }{"report_ids", "p", "the primary key (id, run) of report_ids"})
	}
	for _, c := range want {
		var n int
		if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM pg_constraint
			WHERE conrelid = to_regclass($1) AND contype = $2 AND convalidated`, c.table, c.kind).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("%w: %s is missing", ErrCorrupt, c.what)
		}
	}
	if err := checkRuns(ctx, s); err != nil {
		return err
	}
	var orphans int64
	if err := s.pool.QueryRow(ctx, `SELECT COUNT(*) FROM entries WHERE run NOT IN (SELECT run FROM runs)`).Scan(&orphans); err != nil {
		return err
	}
	if orphans != 0 {
		return fmt.Errorf("%w: %d entries of unregistered runs", ErrCorrupt, orphans)
	}
	return nil
}

// ClaimReportIDs implements ReportIDStore in one transaction of two
// statements, each taking the ids as one uuid[] parameter: an INSERT ...
// SELECT FROM unnest(ids) ... ON CONFLICT (id, run) DO NOTHING, in key
// order (so that two claims of overlapping ids lock them in one order and
// cannot deadlock), and, only if some ids were not inserted, a SELECT of
// those recorded under another round. The INSERT waits for a concurrent
// claim of the same id to commit, and the SELECT, a new statement under
// READ COMMITTED, sees that claim: every id ends up claimed by exactly one
// round.
func (s *PostgresStore) ClaimReportIDs(ctx context.Context, run string, round int64, ids [][16]byte) ([][16]byte, error) {
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
	sorted := slices.SortedFunc(slices.Values(unique), func(a, b [16]byte) int { return bytes.Compare(a[:], b[:]) })
	var other map[[16]byte]bool
	err := s.tx(ctx, func(tx pgx.Tx) error {
		other = nil
		var inserted int
		err := tx.QueryRow(ctx, `WITH claimed AS (
				INSERT INTO report_ids (run, id, round)
				SELECT $1, id, $2 FROM unnest($3::uuid[]) AS ids (id) ORDER BY id
				ON CONFLICT (id, run) DO NOTHING
				RETURNING 1)
			SELECT count(*) FROM claimed`, run, round, sorted).Scan(&inserted)
		if err != nil {
			return err
		}
		if inserted == len(sorted) {
			faultpoint.Hit(PointClaimInTransaction)
			return nil
		}
		rows, err := tx.Query(ctx, `SELECT id FROM report_ids
			WHERE run = $1 AND id = ANY ($3::uuid[]) AND round <> $2`, run, round, sorted)
		if err != nil {
			return err
		}
		replayed, err := pgx.CollectRows(rows, pgx.RowTo[[16]byte])
		if err != nil {
			return err
		}
		for _, id := range replayed {
			if other == nil {
				other = map[[16]byte]bool{}
			}
			other[id] = true
		}
		if inserted > 0 {
			faultpoint.Hit(PointClaimInTransaction)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("claim report IDs of run %q round %d: %w", run, round, err)
	}
	faultpoint.Hit(PointClaimCommitted)
	return claimReplays(ids, dup, other), nil
}

// Close implements Store.
func (s *PostgresStore) Close() error {
	s.pool.Close()
	return nil
}
