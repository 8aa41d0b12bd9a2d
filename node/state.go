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
// opens the ledger named by url (ledger.OpenStore): "" is the embedded
// SQLite ledger in dir; a postgres:// URL a PostgreSQL ledger that several
// shufflers may share.
func OpenShufflerState(ctx context.Context, dir, url string) (*ShufflerState, error) {
	d, err := statedir.Open(dir, statedir.Options{Flag: "state"})
	if err != nil {
		return nil, err
	}
	target, flag := filepath.Join(d.Path(), ledger.FileName), "state"
	if url != "" {
		target, flag = url, "ledger"
	}
	st, err := ledger.OpenStore(ctx, target, ledger.StoreOptions{})
	if err != nil {
		d.Close()
		return nil, fmt.Errorf("--%s: %w", flag, err)
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
