package shard

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/shuffledp/shuffledp/ledger"
)

// ErrLeaseLost is returned by Lease.Check when the lease's session no
// longer holds the shard's lock (its connection broke, or an operator
// terminated it): another replica may hold the shard now, so this one must
// stop debiting and releasing.
var ErrLeaseLost = errors.New("shard lease lost")

// LeaseKey is the PostgreSQL advisory-lock key of shard i of run in
// shards shards: the first 8 bytes of SHA-256("shuffledp shard lease" 0
// RunID(run, i, shards)), top bit cleared (the number of shards is in the
// key, so a replica started with another --shards never holds or waits on
// a lease of this sharding) (a non-negative bigint, so that pg_locks' classid and objid,
// the key's high and low 32 bits, recombine to it without sign trouble).
// The ledger's schema migration uses a fixed key of its own, which no
// shard key equals but with probability 2^-63.
func LeaseKey(run string, i, shards int) int64 {
	h := sha256.New()
	h.Write([]byte("shuffledp shard lease\x00"))
	h.Write([]byte(RunID(run, i, shards)))
	return int64(binary.BigEndian.Uint64(h.Sum(nil)[:8]) &^ (1 << 63))
}

// Lease is a replica's hold on one shard: a session-level PostgreSQL
// advisory lock (pg_advisory_lock on LeaseKey) taken on a connection of
// its own, which nothing else uses. PostgreSQL releases such a lock when
// the session ends, so a replica killed with SIGKILL (its connection
// closed by the kernel) or cut off (the server's TCP keepalive ends the
// session) hands the shard to the next waiter without anyone's help.
//
// The lock alone is not a fence: between Check and a debit the session
// may end (a replica paused, cut off, then resumed after a standby took
// the shard over). So taking the lease also advances the shard's fence in
// the ledger (ledger.AdvanceFenceOn, key the shard's run id, on the
// lease's own session while it holds the lock), and the replica debits
// under Fence (ledger.Options.Fence): its debit's transaction checks that
// the shard's epoch is still its own, so a replica that lost the shard
// cannot debit once the next holder took it (ledger.ErrFenced), and a
// debit it committed before is in the ledger the next holder reads. What
// makes a double release impossible is the Collector (one batch per shard
// and round).
//
// A replica that is paused (SIGSTOP, a frozen VM) keeps its connection
// open: the kernel still answers TCP keepalives. So the lease's session
// also expires: it runs with PostgreSQL's idle_session_timeout (version 14
// and later) set to the lease's TTL, and the lease pings it every TTL/10
// while the process runs. A paused replica stops pinging, PostgreSQL ends
// its session after the TTL, and the standby takes the shard; resumed, the
// replica finds its lease lost (Check) or its debit fenced.
type Lease struct {
	db    *sql.DB
	conn  *sql.Conn
	key   int64
	run   string
	shard int
	fence ledger.Fence
	// mu serializes the lease's statements on conn (heartbeat, Check).
	mu   sync.Mutex
	stop context.CancelFunc
	beat sync.WaitGroup
	// Waited is how long Acquire waited for the lock.
	Waited time.Duration
}

// DefaultLeaseTTL is the TTL of a lease Acquire takes: how long a paused
// replica keeps its shard (PostgreSQL's idle_session_timeout of the
// lease's session).
const DefaultLeaseTTL = 15 * time.Second

// Acquire is AcquireTTL with DefaultLeaseTTL.
func Acquire(ctx context.Context, url string, run string, i, shards int) (*Lease, error) {
	return AcquireTTL(ctx, url, run, i, shards, DefaultLeaseTTL)
}

// Acquire takes the lease of shard i of run in shards shards in the PostgreSQL database at url,
// waiting (pg_advisory_lock) while another session holds it: a standby
// blocks here until the active replica's session ends. Once the lock is
// held it sets the session's idle_session_timeout to ttl (0: none; a
// server before PostgreSQL 14 has none, and a paused replica then keeps
// its shard until its session ends otherwise), starts the lease's
// heartbeat (every ttl/10, until Release), and advances the shard's fence
// (the ledger in that database must have been opened for writing: schema
// version 5, table fences). It returns when all are done, or with ctx's
// error.
func AcquireTTL(ctx context.Context, url string, run string, i, shards int, ttl time.Duration) (*Lease, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("shard lease: %w", err)
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = 10 * time.Second
	}
	// A pool of one connection of the lease's own: closing the pool ends
	// the session, which releases the lock whatever state the connection
	// was left in (a wait cancelled just as the lock was granted).
	db := stdlib.OpenDB(*cfg)
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("shard lease: %w", err)
	}
	l := &Lease{db: db, conn: conn, key: LeaseKey(run, i, shards), run: run, shard: i}
	start := time.Now()
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, l.key); err != nil {
		l.Release()
		return nil, fmt.Errorf("shard lease of run %q shard %d: %w", run, i, err)
	}
	l.Waited = time.Since(start)
	if ttl > 0 {
		if err := l.expire(ctx, ttl); err != nil {
			l.Release()
			return nil, fmt.Errorf("shard lease of run %q shard %d: %w", run, i, err)
		}
	}
	if l.fence, err = ledger.AdvanceFenceOn(ctx, conn, RunID(run, i, shards)); err != nil {
		l.Release()
		return nil, fmt.Errorf("shard lease of run %q shard %d: %w", run, i, err)
	}
	return l, nil
}

// expire sets the session's idle_session_timeout to ttl (where the server
// has it) and starts the heartbeat.
func (l *Lease) expire(ctx context.Context, ttl time.Duration) error {
	var version int
	if err := l.conn.QueryRowContext(ctx, `SELECT current_setting('server_version_num')::int`).Scan(&version); err != nil {
		return err
	}
	if version < 140000 {
		return nil // no idle_session_timeout: the lease ends with its session only
	}
	ms := max(ttl.Milliseconds(), 1)
	if _, err := l.conn.ExecContext(ctx, fmt.Sprintf(`SET idle_session_timeout = %d`, ms)); err != nil {
		return err
	}
	bctx, cancel := context.WithCancel(context.Background())
	l.stop = cancel
	l.beat.Add(1)
	go func() {
		defer l.beat.Done()
		t := time.NewTicker(ttl / 10)
		defer t.Stop()
		for {
			select {
			case <-bctx.Done():
				return
			case <-t.C:
			}
			l.mu.Lock()
			_, err := l.conn.ExecContext(bctx, `SELECT 1`)
			l.mu.Unlock()
			if err != nil {
				return // the session is gone: Check says so
			}
		}
	}()
	return nil
}

// Fence returns the shard's fencing token this lease took: the replica's
// ledger debits under it (ledger.Options.Fence).
func (l *Lease) Fence() *ledger.Fence {
	f := l.fence
	return &f
}

// Check returns nil if the lease's session still holds the shard's lock,
// and an error wrapping ErrLeaseLost otherwise (the query itself failing
// counts as lost: the session is gone or unreachable). It stops a replica
// early; the fence, checked in the debit's transaction, decides.
func (l *Lease) Check(ctx context.Context) error {
	var held bool
	l.mu.Lock()
	defer l.mu.Unlock()
	err := l.conn.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_locks
		WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND granted AND objsubid = 1
		AND (classid::bigint << 32) + objid::bigint = $1)`, l.key).Scan(&held)
	switch {
	case err != nil:
		return fmt.Errorf("%w: run %q shard %d: %v", ErrLeaseLost, l.run, l.shard, err)
	case !held:
		return fmt.Errorf("%w: run %q shard %d: the session no longer holds the lock", ErrLeaseLost, l.run, l.shard)
	}
	return nil
}

// Release gives the shard up: the lock is released and the lease's
// session closed.
func (l *Lease) Release() error {
	if l.stop != nil {
		l.stop()
		l.beat.Wait()
	}
	l.conn.Close()
	return l.db.Close()
}
