package ledger

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
)

// Identifier is implemented by a store that has an identity: an id drawn
// from crypto/rand when the store is created (SQLStore: the meta table's
// ledger_id, added on the first writable open of a ledger created before
// ids existed; MemoryStore: when it is made). A copy of a ledger file has
// its original's id; two ledgers created apart never share one. A state
// directory records the id of the ledger its runs debit
// (statedir.LedgerBinding), so that a ledger replaced by another (a
// missing file recreated empty, another run's copied in) is told apart
// from the one that holds the run's history.
type Identifier interface {
	// Identity returns the store's id ("" for a ledger opened read-only
	// that was never opened for writing since ids exist).
	Identity(ctx context.Context) (string, error)
}

var (
	_ Identifier = (*SQLStore)(nil)
	_ Identifier = (*MemoryStore)(nil)
)

// newLedgerID returns 16 random hex digits.
func newLedgerID() (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("ledger id: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// ensureIdentity gives the ledger an id if it has none (in the transaction
// that creates or migrates the schema).
func ensureIdentity(ctx context.Context, tx *sql.Tx) error {
	id, err := newLedgerID()
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES ('ledger_id', $1) ON CONFLICT (key) DO NOTHING`, id); err != nil {
		return fmt.Errorf("writing meta: %w", err)
	}
	return nil
}

// Identity implements Identifier.
func (s *SQLStore) Identity(ctx context.Context) (string, error) {
	var id string
	err := s.retry(ctx, func() error {
		return s.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'ledger_id'`).Scan(&id)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("ledger %s: reading its id: %w", s.name, err)
	}
	return id, nil
}

// Identity implements Identifier.
func (m *MemoryStore) Identity(ctx context.Context) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return "", errClosed
	}
	return m.id, nil
}
