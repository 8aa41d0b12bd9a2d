package shard

import (
	"context"
	"crypto/sha256"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/internal/pgtest"
	"github.com/shuffledp/shuffledp/ledger"
)

// openLedger opens (creating its schema) the ledger in the PostgreSQL
// database at url, closed at the test's end.
func openLedger(t *testing.T, url string) *ledger.SQLStore {
	t.Helper()
	s, err := ledger.OpenPostgres(context.Background(), url, ledger.PostgresOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// terminate ends the lease's PostgreSQL session, as an operator or the
// server's TCP keepalive ends that of a replica cut off from it.
func terminate(t *testing.T, ctx context.Context, url string, l *Lease) {
	t.Helper()
	var pid int
	if err := l.conn.QueryRowContext(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `SELECT pg_terminate_backend($1)`, pid); err != nil {
		t.Fatal(err)
	}
}

// TestStaleHolderFenced: the shard lease is a fencing token. Replica A of
// shard 1 holds the lease and debits the coordinator's round 1; before
// round 2's debit it checks its lease (held) and pauses; meanwhile its
// session is cut and standby B takes the shard. A resumes and debits round
// 2; B reads the shard's rows and debits round 2 too (the coordinator
// still owes it). Fenced (the lease's epoch checked in the debit's
// transaction), A's debit fails with ledger.ErrFenced and writes nothing:
// the shard has one row per round. The negative control, the same
// sequence with the ledgers unfenced (the lock checked before the debit,
// as before), shows the double debit: A's stale debit commits, and B,
// which continues after the last debited row, debits round 2 a second
// time.
func TestStaleHolderFenced(t *testing.T) {
	const run, S, i = "fence", 2, 1
	ev := event.Event{Mechanism: "subsampled-shuffle", N: 10, K: 3, Eps0: 1}
	for _, fenced := range []bool{true, false} {
		url := pgtest.NewSchema(t)
		store := openLedger(t, url)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		open := func(l *Lease) *ledger.Ledger {
			opts := ledger.Options{Delta: 1e-5}
			if fenced {
				opts.Fence = l.Fence()
			}
			led, err := ledger.Open(ctx, store, RunID(run, i, S), opts)
			if err != nil {
				t.Fatal(err)
			}
			return led
		}
		a, err := Acquire(ctx, url, run, i, S)
		if err != nil {
			t.Fatal(err)
		}
		la := open(a)
		if err := a.Check(ctx); err != nil {
			t.Fatal(err)
		}
		if err := la.Debit(ctx, 1, ev, 3, sha256.Sum256([]byte("A, coordinator round 1"))); err != nil {
			t.Fatalf("fenced=%v: the holder's debit: %v", fenced, err)
		}
		// Round 2: A's lease check passes, then A pauses.
		if err := a.Check(ctx); err != nil {
			t.Fatal(err)
		}
		terminate(t, ctx, url, a)
		b, err := Acquire(ctx, url, run, i, S) // the standby takes the shard
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Check(ctx); !errors.Is(err, ErrLeaseLost) {
			t.Fatalf("the stale holder's Check: %v, want ErrLeaseLost", err)
		}
		// A resumes past its check and debits round 2.
		errA := la.Debit(ctx, 2, ev, 3, sha256.Sum256([]byte("A, coordinator round 2")))
		lb := open(b)
		if err := lb.Debit(ctx, lb.LastRound()+1, ev, 3, sha256.Sum256([]byte("B, coordinator round 2"))); err != nil {
			t.Fatalf("fenced=%v: the new holder's debit: %v", fenced, err)
		}
		es, err := store.Entries(ctx, RunID(run, i, S))
		if err != nil {
			t.Fatal(err)
		}
		g, err := lb.Epsilon()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("fenced=%v: stale debit: %v; %d rows for 2 coordinator rounds, shard epsilon %.5f", fenced, errA, len(es), g.Epsilon)
		if fenced {
			if !errors.Is(errA, ledger.ErrFenced) {
				t.Errorf("the stale holder's debit: %v, want ErrFenced", errA)
			}
			if len(es) != 2 || es[1].Digest != sha256.Sum256([]byte("B, coordinator round 2")) {
				t.Errorf("%d rows (%+v), want 2: round 1 by A, round 2 by B", len(es), es)
			}
		} else {
			// Negative control: the stale debit commits; round 2 is
			// debited twice.
			if errA != nil {
				t.Errorf("negative control: the unfenced stale debit failed (%v); the control shows nothing", errA)
			}
			if len(es) != 3 {
				t.Errorf("negative control: %d rows, want 3 (coordinator round 2 debited by A and by B)", len(es))
			}
		}
		b.Release()
		a.Release()
		cancel()
	}
}
