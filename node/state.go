package node

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/shuffledp/shuffledp/ledger"
	"github.com/shuffledp/shuffledp/statedir"
)

// ShufflerState is the shuffler's state directory, locked for the node's
// life: the durable ledger with its report ids (DIR/ledger.db, embedded
// SQLite), read by `shuffledp ledger show --state DIR`.
type ShufflerState struct {
	dir   *statedir.Dir
	Store ledger.Backend
	close func() error
}

// OpenShufflerState locks dir (creating it; its parent must exist) and
// opens the ledger named by url: "" is the embedded SQLite ledger in dir.
// Other URLs (postgres://) are not supported by this build yet.
func OpenShufflerState(ctx context.Context, dir, url string) (*ShufflerState, error) {
	if url != "" {
		return nil, fmt.Errorf("ledger %q: only the embedded SQLite ledger in --state is supported by this build", url)
	}
	d, err := statedir.Open(dir, statedir.Options{Flag: "state"})
	if err != nil {
		return nil, err
	}
	st, err := ledger.OpenSQLite(ctx, filepath.Join(d.Path(), ledger.FileName), ledger.SQLiteOptions{})
	if err != nil {
		d.Close()
		return nil, fmt.Errorf("--state %s: %w", dir, err)
	}
	return &ShufflerState{dir: d, Store: st, close: st.Close}, nil
}

// Close closes the ledger and releases the lock.
func (s *ShufflerState) Close() error {
	return errors.Join(s.close(), s.dir.Close())
}

// WriteAddr writes a listener's address to path atomically (for a parent
// process, such as `shuffledp up`, that started a node on port 0).
func WriteAddr(path, addr string) error {
	if path == "" {
		return nil
	}
	if err := statedir.WriteFileAtomic(path, []byte(addr+"\n")); err != nil {
		return fmt.Errorf("addr-file: %w", err)
	}
	return nil
}
