package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
)

// dialect is everything in which SQLStore's SQL differs between SQLite and
// PostgreSQL. The statements themselves are written once, in sqlstore.go,
// with $N placeholders, which both drivers accept; INSERT ... ON CONFLICT
// DO NOTHING and ON CONFLICT (key) DO UPDATE are spelled alike in both.
// How a connection is made (SQLite's pragmas, PostgreSQL's URL) is in
// sqlite.go and postgres.go.
type dialect struct {
	name string
	// migrations[v] takes a ledger from schema version v to v+1
	// (migrations[0] creates version 1).
	migrations [][]string
	// metaExists is a query of one boolean row: whether the meta table
	// exists.
	metaExists string
	// migrationLock, if not empty, is executed first in the transaction
	// that creates or migrates the schema, so that processes opening one
	// database at once migrate it once.
	migrationLock string
	// lockRow ends the SELECT of a run's entry count in Append, locking the
	// row until the transaction ends.
	lockRow string
	// byteOrder ends an ORDER BY of run ids so that they sort by their
	// bytes, as Go's sort.Strings does.
	byteOrder string
	// claimLock, if not empty, is executed first in a transaction that
	// claims report IDs, with the run as parameter $1, so that claims of
	// one run are serialized: a claim reads the run's stored IDs and then
	// writes its round's row, and two claims must not both read before
	// either writes. (SQLite's transactions hold the database's write lock
	// from their start.)
	claimLock string
	// transient reports whether err failed a statement or transaction that
	// wrote nothing and may be retried whole; retries stop after
	// maxAttempts attempts or retryFor (0: no limit).
	transient   func(err error) bool
	maxAttempts int
	retryFor    time.Duration
	// check is the integrity check the database itself offers, run by
	// SQLStore.Check on a ledger of schema version version; a failure
	// wraps ErrCorrupt.
	check func(ctx context.Context, db *sql.DB, version int) error
}

// pruneMigration takes a ledger from schema version 2 to 3, in SQLite and
// PostgreSQL alike: the index (run, round) by which a debit deletes the
// report IDs of the rounds below it (SQLStore.pruneTx), and the deletion,
// once, of the IDs of rounds below each run's last debited round, which
// version 2 kept (the debits of version 3 would have deleted them).
var pruneMigration = []string{
	`CREATE INDEX IF NOT EXISTS report_ids_round ON report_ids (run, round)`,
	`DELETE FROM report_ids WHERE round < (SELECT MAX(round) FROM entries WHERE entries.run = report_ids.run)`,
}

// roundsMigration takes a ledger from schema version 3 to 4: the report
// IDs of a (run, round) become one row whose ids column is the round's IDs
// concatenated (16 bytes each), so that a round's claim writes one row and
// its deletion deletes one, instead of one B-tree entry per report (at
// k = 10,000, 65 ms of the shuffler's CPU per round in SQLite, the
// largest cost of a released round). The IDs are copied, grouped by
// (run, round), and the per-ID table is dropped. The statements differ
// only in how a group's IDs are concatenated (the dialect's aggregate).
func roundsMigration(blobType, check, concat string) []string {
	return []string{
		`CREATE TABLE IF NOT EXISTS report_id_rounds (
			run   TEXT NOT NULL,
			round BIGINT NOT NULL CHECK (round >= 0),
			ids   ` + blobType + ` NOT NULL CHECK (` + check + `),
			PRIMARY KEY (run, round)
		)`,
		`INSERT INTO report_id_rounds (run, round, ids) SELECT run, round, ` + concat + ` FROM report_ids GROUP BY run, round`,
		`DROP TABLE report_ids`,
	}
}

// sqliteDialect is SQLite's dialect, retrying a transaction that finds the
// database locked (SQLITE_BUSY) for up to busy.
//
// The report IDs of schema versions 2 and 3 are 16-byte BLOBs keyed (run,
// id) in a table without rowid; from version 4 a round's IDs are one BLOB
// keyed (run, round). Every transaction takes the write lock first (BEGIN
// IMMEDIATE, the DSN's _txlock), so no row lock is needed.
func sqliteDialect(busy time.Duration) *dialect {
	return &dialect{
		name: "sqlite",
		migrations: [][]string{
			schema,
			{`CREATE TABLE IF NOT EXISTS report_ids (
				run   TEXT NOT NULL,
				id    BLOB NOT NULL CHECK (typeof(id) = 'blob' AND length(id) = 16),
				round BIGINT NOT NULL CHECK (round >= 0),
				PRIMARY KEY (run, id)
			) WITHOUT ROWID`},
			pruneMigration,
			roundsMigration(`BLOB`, `typeof(ids) = 'blob' AND length(ids) % 16 = 0`, `unhex(group_concat(hex(id), ''))`),
			fenceMigration,
		},
		metaExists: `SELECT COUNT(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = 'meta'`,
		transient:  isBusy,
		retryFor:   busy,
		check:      sqliteCheck,
	}
}

// postgresDialect is PostgreSQL's dialect.
//
// Schema versions 2 and 3 keep report IDs as uuid, PostgreSQL's 16-byte
// type, under the key (id, run); from version 4 a round's IDs are one
// bytea keyed (run, round), and claims of a run are serialized by an
// advisory lock (claimLock). Append locks the run's row (READ COMMITTED, SELECT
// ... FOR UPDATE); the schema is migrated under a transaction-scoped
// advisory lock; a transaction aborted as a deadlock (40P01) or a
// serialization failure (40001) is retried, up to five attempts.
var postgresDialect = &dialect{
	name: "postgres",
	migrations: [][]string{
		schema,
		{`CREATE TABLE IF NOT EXISTS report_ids (
			run   TEXT NOT NULL,
			id    UUID NOT NULL,
			round BIGINT NOT NULL CHECK (round >= 0),
			PRIMARY KEY (id, run)
		)`},
		pruneMigration,
		roundsMigration(`BYTEA`, `octet_length(ids) % 16 = 0`, `string_agg(uuid_send(id), ''::bytea)`),
		fenceMigration,
	},
	metaExists: `SELECT to_regclass('meta') IS NOT NULL`,
	// The lock's key is "shuffled" in ASCII.
	migrationLock: `SELECT pg_advisory_xact_lock(` + strconv.FormatInt(0x73687566666c6564, 10) + `)`,
	lockRow:       ` FOR UPDATE`,
	byteOrder:     ` COLLATE "C"`,
	// A transaction-scoped advisory lock in the two-key space (the
	// migration lock and shard.Lease use the one-key space), keyed by
	// "shuf" in ASCII and the run's hash: claims of one run wait for each
	// other; a hash collision only serializes two runs' claims.
	claimLock: `SELECT pg_advisory_xact_lock(1936225638, hashtext($1))`,
	transient: func(err error) bool {
		var pe *pgconn.PgError
		return errors.As(err, &pe) && (pe.Code == "40P01" || pe.Code == "40001")
	},
	maxAttempts: 5,
	check:       postgresCheck,
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

// sqliteCheck runs PRAGMA integrity_check and foreign_key_check, and
// checks that every report ID is a 16-byte BLOB of a round >= 0 (from
// schema version 4: every round's IDs a BLOB of a multiple of 16 bytes).
func sqliteCheck(ctx context.Context, db *sql.DB, version int) error {
	if err := pragmaCheck(ctx, db, `PRAGMA integrity_check`, "ok"); err != nil {
		return err
	}
	if err := pragmaCheck(ctx, db, `PRAGMA foreign_key_check`, ""); err != nil {
		return err
	}
	if version >= 2 {
		q := `SELECT COUNT(*) FROM report_ids WHERE typeof(id) <> 'blob' OR length(id) <> 16 OR round < 0`
		if version >= 4 {
			q = `SELECT COUNT(*) FROM report_id_rounds WHERE typeof(ids) <> 'blob' OR length(ids) % 16 <> 0 OR round < 0`
		}
		var bad int64
		if err := db.QueryRowContext(ctx, q).Scan(&bad); err != nil {
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
func pragmaCheck(ctx context.Context, db *sql.DB, pragma, want string) error {
	rows, err := db.QueryContext(ctx, pragma)
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

// postgresCheck checks that the constraints which make debits and claims
// unique (UNIQUE (run, round) on entries, the primary key (id, run) of
// report_ids, or (run, round) of report_id_rounds from version 4), the
// primary key of runs and the entries' foreign key are
// present and validated.
func postgresCheck(ctx context.Context, db *sql.DB, version int) error {
	want := []struct{ table, kind, what string }{
		{"entries", "u", "the UNIQUE (run, round) key of entries"},
		{"entries", "f", "the foreign key of entries to runs"},
		{"runs", "p", "the primary key of runs"},
	}
	switch {
	case version >= 4:
		want = append(want, struct{ table, kind, what string }{"report_id_rounds", "p", "the primary key (run, round) of report_id_rounds"})
	case version >= 2:
		want = append(want, struct{ table, kind, what string }{"report_ids", "p", "the primary key (id, run) of report_ids"})
	}
	if version >= 5 {
		want = append(want, struct{ table, kind, what string }{"fences", "p", "the primary key (key) of fences"})
	}
	for _, c := range want {
		var n int
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM pg_constraint
			WHERE conrelid = to_regclass($1) AND contype = $2 AND convalidated`, c.table, c.kind).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("%w: %s is missing", ErrCorrupt, c.what)
		}
	}
	return nil
}
