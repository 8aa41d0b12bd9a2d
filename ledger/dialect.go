package ledger

import (
	"context"
	"database/sql"
	"encoding/hex"
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
	// idSet is a subquery of one column, id: the report IDs passed as
	// parameter $3, in the form idArg makes of them.
	idSet string
	idArg func(sorted [][16]byte) any
	// idBytes is report_ids.id as a 16-byte string.
	idBytes string
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

// sqliteDialect is SQLite's dialect, retrying a transaction that finds the
// database locked (SQLITE_BUSY) for up to busy.
//
// The report IDs of schema version 2 are 16-byte BLOBs keyed (run, id) in
// a table without rowid, so the key is the table. A claim passes its ids
// as one JSON array of hexadecimal strings (json_each). Every transaction
// takes the write lock first (BEGIN IMMEDIATE, the DSN's _txlock), so no
// row lock is needed.
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
		},
		metaExists: `SELECT COUNT(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = 'meta'`,
		idSet:      `SELECT unhex(value) AS id FROM json_each($3)`,
		idArg:      func(ids [][16]byte) any { return hexList(ids) },
		idBytes:    `id`,
		transient:  isBusy,
		retryFor:   busy,
		check:      sqliteCheck,
	}
}

// postgresDialect is PostgreSQL's dialect.
//
// Schema version 2 keeps report IDs as uuid, PostgreSQL's 16-byte type,
// under the key (id, run): random ids first, so that comparisons in the
// index are decided by the id and not by the run shared by every row
// (measured, interleaved on one server: 59 ms of server CPU per 10,000-id
// INSERT ... ON CONFLICT, against 67 ms with (run, id)). A claim passes its
// ids as one uuid[]. Append locks the run's row (READ COMMITTED, SELECT
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
	},
	metaExists: `SELECT to_regclass('meta') IS NOT NULL`,
	// The lock's key is "shuffled" in ASCII.
	migrationLock: `SELECT pg_advisory_xact_lock(` + strconv.FormatInt(0x73687566666c6564, 10) + `)`,
	lockRow:       ` FOR UPDATE`,
	byteOrder:     ` COLLATE "C"`,
	idSet:         `SELECT id FROM unnest($3::uuid[]) AS u (id)`,
	idArg:         func(ids [][16]byte) any { return ids },
	idBytes:       `uuid_send(id)`,
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

// sqliteCheck runs PRAGMA integrity_check and foreign_key_check, and
// checks that every report ID is a 16-byte BLOB of a round >= 0.
func sqliteCheck(ctx context.Context, db *sql.DB, version int) error {
	if err := pragmaCheck(ctx, db, `PRAGMA integrity_check`, "ok"); err != nil {
		return err
	}
	if err := pragmaCheck(ctx, db, `PRAGMA foreign_key_check`, ""); err != nil {
		return err
	}
	if version >= 2 {
		var bad int64
		if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM report_ids
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
// report_ids), the primary key of runs and the entries' foreign key are
// present and validated.
func postgresCheck(ctx context.Context, db *sql.DB, version int) error {
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
