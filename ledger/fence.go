package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// ErrFenced is returned by a fenced debit whose fence is no longer the
// current one: another writer advanced the fence's epoch (a standby took
// the shard over), so this one may no longer debit. Nothing is written.
var ErrFenced = errors.New("fenced: another writer holds the fence")

// Fence is a fencing token (Kleppmann, "How to do distributed locking",
// 2016; Chubby's sequencers, Burrows, OSDI 2006): the epoch a writer
// received when it took the fence named Key. A debit made under a Fence
// (Options.Fence) commits only if Key's epoch in the store is still Epoch,
// checked inside the debit's own transaction; AdvanceFence increments it.
// So once a new writer advanced the epoch, every later debit of an older
// writer fails with ErrFenced, whatever the older writer believes (a
// process paused between its lease check and its debit, then resumed), and
// a debit that committed before the advance is in the store before the new
// writer reads it.
type Fence struct {
	Key   string
	Epoch int64
}

// Fencer is a store whose debits can be fenced. SQLStore (table fences,
// schema version 5) and MemoryStore implement it.
type Fencer interface {
	// AdvanceFence increments key's epoch (the first is 1) and returns
	// the new fence.
	AdvanceFence(ctx context.Context, key string) (Fence, error)
	// AppendFenced is Append(e, seen), or with claim AppendClaiming(e,
	// seen, ids), in one transaction that first checks that f.Key's
	// epoch is f.Epoch; if it is not, it writes nothing and returns an
	// error wrapping ErrFenced.
	AppendFenced(ctx context.Context, f Fence, e Entry, seen int64, claim bool, ids [][16]byte) (existed bool, replays [][16]byte, err error)
}

var (
	_ Fencer = (*SQLStore)(nil)
	_ Fencer = (*MemoryStore)(nil)
)

// fenceMigration takes a ledger from schema version 4 to 5, in SQLite and
// PostgreSQL alike: the fences' epochs.
var fenceMigration = []string{
	`CREATE TABLE IF NOT EXISTS fences (
		key        TEXT PRIMARY KEY,
		epoch      BIGINT NOT NULL CHECK (epoch >= 1),
		updated_at TEXT NOT NULL
	)`,
}

// ExecQuerier is what AdvanceFenceOn needs of a connection: *sql.DB,
// *sql.Conn and *sql.Tx have it.
type ExecQuerier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// AdvanceFenceOn increments key's epoch in the ledger database reached by
// q (schema version 5 or later; one statement, committed on its own
// unless q is a transaction) and returns the new fence. A shard lease
// calls it on the session that holds the shard's advisory lock, so that
// the epoch advances only while the lock is held.
func AdvanceFenceOn(ctx context.Context, q ExecQuerier, key string) (Fence, error) {
	if key == "" {
		return Fence{}, errors.New("fence: empty key")
	}
	f := Fence{Key: key}
	err := q.QueryRowContext(ctx, `INSERT INTO fences (key, epoch, updated_at) VALUES ($1, 1, $2)
		ON CONFLICT (key) DO UPDATE SET epoch = fences.epoch + 1, updated_at = excluded.updated_at
		RETURNING epoch`, key, formatTime(time.Now())).Scan(&f.Epoch)
	if err != nil {
		return Fence{}, fmt.Errorf("advancing fence %q (a ledger of schema version 5 or later must be opened for writing in this database first): %w", key, err)
	}
	return f, nil
}

// AdvanceFence implements Fencer.
func (s *SQLStore) AdvanceFence(ctx context.Context, key string) (Fence, error) {
	if err := s.writable("advance fence"); err != nil {
		return Fence{}, err
	}
	var f Fence
	err := s.retry(ctx, func() (err error) {
		f, err = AdvanceFenceOn(ctx, s.db, key)
		return err
	})
	return f, err
}

// fenceTx checks, inside a debit's transaction, that f's key is still at
// f's epoch. The UPDATE locks the fence's row (PostgreSQL) until the
// transaction ends, so an AdvanceFence running at the same time either
// waits for the debit to commit (and the new writer then reads the debit)
// or commits first (and the UPDATE, re-checking its WHERE on the new row,
// matches nothing).
func fenceTx(ctx context.Context, tx *sql.Tx, f Fence) error {
	res, err := tx.ExecContext(ctx, `UPDATE fences SET epoch = epoch WHERE key = $1 AND epoch = $2`, f.Key, f.Epoch)
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 1 {
		return nil
	}
	var now int64
	switch err := tx.QueryRowContext(ctx, `SELECT epoch FROM fences WHERE key = $1`, f.Key).Scan(&now); {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("%w: fence %q was never taken (epoch %d presented)", ErrFenced, f.Key, f.Epoch)
	case err != nil:
		return err
	}
	return fmt.Errorf("%w: fence %q is at epoch %d, this writer holds epoch %d", ErrFenced, f.Key, now, f.Epoch)
}

// AppendFenced implements Fencer: fenceTx, then Append's or
// AppendClaiming's statements, in one transaction.
func (s *SQLStore) AppendFenced(ctx context.Context, f Fence, e Entry, seen int64, claim bool, ids [][16]byte) (bool, [][16]byte, error) {
	fence := &f
	if !claim {
		ids = nil
	}
	return s.appendClaiming(ctx, e, seen, claim, ids, fence)
}

// AdvanceFence implements Fencer.
func (m *MemoryStore) AdvanceFence(ctx context.Context, key string) (Fence, error) {
	if key == "" {
		return Fence{}, errors.New("fence: empty key")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return Fence{}, errClosed
	}
	if m.fences == nil {
		m.fences = map[string]int64{}
	}
	m.fences[key]++
	return Fence{Key: key, Epoch: m.fences[key]}, nil
}

// AppendFenced implements Fencer.
func (m *MemoryStore) AppendFenced(ctx context.Context, f Fence, e Entry, seen int64, claim bool, ids [][16]byte) (bool, [][16]byte, error) {
	if err := m.checkAppend(ctx, e); err != nil {
		return false, nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return false, nil, errClosed
	}
	switch now, ok := m.fences[f.Key]; {
	case !ok:
		return false, nil, fmt.Errorf("%w: fence %q was never taken (epoch %d presented)", ErrFenced, f.Key, f.Epoch)
	case now != f.Epoch:
		return false, nil, fmt.Errorf("%w: fence %q is at epoch %d, this writer holds epoch %d", ErrFenced, f.Key, now, f.Epoch)
	}
	if !claim {
		existed, err := m.appendLocked(e, seen)
		return existed, nil, err
	}
	return m.appendClaimingLocked(e, seen, ids)
}
