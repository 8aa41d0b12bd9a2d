package ledger

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/shuffledp/shuffledp/event"
)

// TestIdentity: a ledger file gets an id when it is created, keeps it when
// reopened (read-only or not) and carries it in a copy; another file has
// another id; a memory store has one of its own.
func TestIdentity(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	id := func(path string, ro bool) string {
		t.Helper()
		s, err := OpenSQLite(ctx, path, SQLiteOptions{ReadOnly: ro})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		got, err := s.Identity(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	a := filepath.Join(dir, "a.db")
	first := id(a, false)
	if !regexp.MustCompile(`^[0-9a-f]{16}$`).MatchString(first) {
		t.Fatalf("ledger id %q: want 16 hex digits", first)
	}
	if again, ro := id(a, false), id(a, true); again != first || ro != first {
		t.Fatalf("reopened: id %q, read-only %q; want %q", again, ro, first)
	}
	b := filepath.Join(dir, "b.db")
	if other := id(b, false); other == first {
		t.Fatalf("two ledgers share the id %q", first)
	}
	raw, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	c := filepath.Join(dir, "c.db")
	if err := os.WriteFile(c, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if cp := id(c, false); cp != first {
		t.Fatalf("a copy has id %q, its original %q", cp, first)
	}
	m1, _ := NewMemoryStore().Identity(ctx)
	m2, _ := NewMemoryStore().Identity(ctx)
	if m1 == "" || m1 == m2 {
		t.Fatalf("memory stores' ids %q, %q: want two distinct ids", m1, m2)
	}
}

// TestIdentityAddedToOldLedger: a ledger without an id (written before ids
// existed) reads as "" read-only and gets one at its first writable open,
// its entries kept.
func TestIdentityAddedToOldLedger(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	s, err := OpenSQLite(ctx, path, SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	l, err := Open(ctx, s, "run1", Options{Delta: 1e-5})
	if err != nil {
		t.Fatal(err)
	}
	ev := event.Event{Mechanism: event.SubsampledShuffle, N: 1000, K: 100, Eps0: 1}
	if err := l.Debit(ctx, 1, ev, 100, Digest{1}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.ExecContext(ctx, `DELETE FROM meta WHERE key = 'ledger_id'`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	ro, err := OpenSQLite(ctx, path, SQLiteOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if id, err := ro.Identity(ctx); err != nil || id != "" {
		t.Fatalf("read-only open of a ledger without id: %q, %v; want \"\"", id, err)
	}
	ro.Close()
	rw, err := OpenSQLite(ctx, path, SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer rw.Close()
	if id, err := rw.Identity(ctx); err != nil || len(id) != 16 {
		t.Fatalf("writable open: id %q, %v; want one", id, err)
	}
	if es, err := rw.Entries(ctx, "run1"); err != nil || len(es) != 1 {
		t.Fatalf("entries after the id was added: %v, %v", es, err)
	}
}

// TestLedgerEntry: Entry finds a debited round, and only that.
func TestLedgerEntry(t *testing.T) {
	ctx := context.Background()
	l, err := Open(ctx, NewMemoryStore(), "run1", Options{Delta: 1e-5})
	if err != nil {
		t.Fatal(err)
	}
	ev := event.Event{Mechanism: event.SubsampledShuffle, N: 1000, K: 100, Eps0: 1}
	if err := l.Debit(ctx, 3, ev, 90, Digest{7}); err != nil {
		t.Fatal(err)
	}
	if e, ok := l.Entry(3); !ok || e.Round != 3 || e.Reports != 90 || e.Digest != (Digest{7}) {
		t.Fatalf("Entry(3) = %+v, %v", e, ok)
	}
	for _, r := range []int64{0, 2, 4} {
		if _, ok := l.Entry(r); ok {
			t.Fatalf("Entry(%d) found a round never debited", r)
		}
	}
}
