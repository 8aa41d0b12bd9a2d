package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"

	_ "modernc.org/sqlite" // registers the pure-Go "sqlite" driver
)

// FileName is the name of the ledger database inside a state directory.
const FileName = "ledger.db"

// SQLiteOptions configure OpenSQLite.
type SQLiteOptions struct {
	// ReadOnly opens an existing ledger for reading only (nothing is
	// created or written; Register, Append and ClaimReportIDs fail).
	ReadOnly bool
	// BusyTimeout is how long a statement waits for another connection's
	// or process's lock before failing; 0 means 10 s.
	BusyTimeout time.Duration
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

// OpenSQLite opens the ledger database file at path, through the pure-Go
// driver modernc.org/sqlite (no cgo), creating it (and its schema) unless
// opts.ReadOnly; the parent directory must exist. A new file's directory
// entry is fsynced before OpenSQLite returns.
//
// The connection runs the database in WAL mode with synchronous=FULL (a
// commit is fsynced to the write-ahead log before it returns), with
// foreign keys on, and begins every transaction with BEGIN IMMEDIATE, so
// that processes sharing the file serialize on its write lock and the
// UNIQUE (run, round) key decides between them.
func OpenSQLite(ctx context.Context, path string, opts SQLiteOptions) (*SQLStore, error) {
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
	db, err := sql.Open("sqlite", dsn(abs, opts))
	if err != nil {
		return nil, fmt.Errorf("ledger %s: %w", path, err)
	}
	// One connection: the process's own callers queue in database/sql
	// rather than on SQLite's file lock; other processes wait up to the
	// busy timeout.
	db.SetMaxOpenConns(1)
	s, err := openSQL(ctx, db, sqliteDialect(busyTimeout(opts)), abs, opts.ReadOnly)
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
