package ledger

import (
	"context"
	"errors"
	"fmt"
	"os"
)

// StoreOptions configure OpenStore.
type StoreOptions struct {
	// ReadOnly opens an existing ledger for reading only: nothing is
	// created, migrated or written.
	ReadOnly bool
}

// OpenStore opens the ledger that target names, for a shuffler (which
// debits the ledger and claims report IDs in it) or a reader such as
// `shuffledp ledger show --ledger TARGET`:
//
//   - a URL whose scheme is postgres or postgresql (any case) opens a
//     PostgreSQL SQLStore (OpenPostgres), which several shufflers on several
//     machines may share; its password never appears in errors;
//   - anything else is the path of an SQLite ledger file (OpenSQLite),
//     created with its schema unless opts.ReadOnly (its directory must
//     exist). A directory is refused: a run's state directory keeps its
//     ledger in the file FileName inside it.
//
// The schema is created or migrated to SchemaVersion on open unless
// opts.ReadOnly. A libpq key=value connection string is not recognised;
// use the URL form.
func OpenStore(ctx context.Context, target string, opts StoreOptions) (Backend, error) {
	if target == "" {
		return nil, errors.New("ledger: empty target: want a postgres:// URL or an SQLite file path")
	}
	if IsPostgresURL(target) {
		return OpenPostgres(ctx, target, PostgresOptions{ReadOnly: opts.ReadOnly})
	}
	if st, err := os.Stat(target); err == nil && st.IsDir() {
		return nil, fmt.Errorf("ledger %s: is a directory, not a ledger file (a state directory's ledger is %s inside it)", target, FileName)
	}
	return OpenSQLite(ctx, target, SQLiteOptions{ReadOnly: opts.ReadOnly})
}
