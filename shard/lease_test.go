package shard

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/shuffledp/shuffledp/internal/pgtest"
)

func TestLeaseKey(t *testing.T) {
	seen := map[int64]string{}
	for _, run := range []string{"a", "b", "a#shard-0-of-2"} {
		for S := 2; S <= 4; S++ {
			for i := range S {
				k := LeaseKey(run, i, S)
				if k < 0 {
					t.Errorf("LeaseKey(%q, %d, %d) = %d < 0", run, i, S, k)
				}
				if prev, dup := seen[k]; dup {
					t.Errorf("LeaseKey(%q, %d, %d) = LeaseKey of %s", run, i, S, prev)
				}
				seen[k] = RunID(run, i, S)
			}
		}
	}
	if LeaseKey("a", 1, 2) != LeaseKey("a", 1, 2) {
		t.Error("LeaseKey is not a function")
	}
}

// TestLease: one holder per (run, shard); a standby waits and gets the
// lease when the holder's session ends, whether released or terminated;
// Check sees a terminated session.
func TestLease(t *testing.T) {
	url := pgtest.NewSchema(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := Acquire(ctx, url, "lease", 0, 2); err == nil {
		t.Fatal("a lease taken in a database without a ledger (no fences to advance)")
	}
	openLedger(t, url)
	a, err := Acquire(ctx, url, "lease", 0, 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Check(ctx); err != nil {
		t.Fatalf("the holder's Check: %v", err)
	}
	other, err := Acquire(ctx, url, "lease", 1, 2) // another shard: no wait
	if err != nil {
		t.Fatal(err)
	}
	other.Release()
	// The same shard of another sharding is another lease.
	if o, err := Acquire(ctx, url, "lease", 0, 3); err != nil {
		t.Fatal(err)
	} else {
		o.Release()
	}
	short, cancelShort := context.WithTimeout(ctx, 200*time.Millisecond)
	if _, err := Acquire(short, url, "lease", 0, 2); err == nil {
		t.Fatal("a second replica took a held lease")
	}
	cancelShort()
	got := make(chan *Lease, 1)
	go func() {
		b, err := Acquire(ctx, url, "lease", 0, 2)
		if err != nil {
			t.Error(err)
		}
		got <- b
	}()
	select {
	case <-got:
		t.Fatal("the standby took the lease while it was held")
	case <-time.After(200 * time.Millisecond):
	}
	a.Release()
	var b *Lease
	select {
	case b = <-got:
	case <-ctx.Done():
		t.Fatal("the standby did not get the released lease")
	}
	if b == nil {
		t.FailNow()
	}
	// An operator (or the server's keepalive) ends b's session: Check
	// says so, and a third replica takes the shard.
	var pid int
	if err := b.conn.QueryRowContext(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
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
	if err := b.Check(ctx); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("Check after the session was terminated: %v, want ErrLeaseLost", err)
	}
	b.Release()
	c, err := Acquire(ctx, url, "lease", 0, 2)
	if err != nil {
		t.Fatal(err)
	}
	c.Release()
}
