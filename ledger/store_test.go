package ledger

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/internal/pgtest"
)

// subsampled is the NeurIPS'21 MNIST setting: k = 1,000 of n = 60,000
// clients per round, eps0 = 2.
var subsampled = event.Event{Mechanism: "subsampled-shuffle", N: 60000, K: 1000, Eps0: 2}

// backends opens each Store implementation afresh for a test: the
// conformance tests run over this table.
var backends = []struct {
	name string
	open func(t testing.TB) Store
}{
	{"memory", func(t testing.TB) Store { return NewMemoryStore() }},
	{"sqlite", func(t testing.TB) Store {
		s, err := OpenSQLite(context.Background(), filepath.Join(t.TempDir(), FileName), SQLiteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}},
	{"postgres", func(t testing.TB) Store {
		s, err := OpenPostgres(context.Background(), pgtest.NewSchema(t), PostgresOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}},
}

// sharedBackends are the durable backends that several stores (processes)
// can open at once: target returns a new, empty ledger that open opens.
var sharedBackends = []struct {
	name   string
	target func(t testing.TB) string
	open   func(t testing.TB, target string) Backend
}{
	{"sqlite", func(t testing.TB) string { return filepath.Join(t.TempDir(), FileName) }, openTarget},
	{"postgres", func(t testing.TB) string { return pgtest.NewSchema(t) }, openTarget},
}

func openTarget(t testing.TB, target string) Backend {
	s, err := OpenStore(context.Background(), target, StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func entry(run string, round int64, ev event.Event, batch string) Entry {
	return Entry{Run: run, Round: round, Event: ev, Reports: int(ev.K), Digest: sha256.Sum256([]byte(batch)),
		Time: time.Date(2026, 11, 23, 10, 0, 0, int(round), time.UTC)}
}

func mustRegister(t testing.TB, s Store, run string) {
	t.Helper()
	if _, err := s.Register(context.Background(), RunInfo{Run: run, Delta: 1e-5}); err != nil {
		t.Fatal(err)
	}
}

func TestStoreAppend(t *testing.T) {
	ctx := context.Background()
	other := subsampled
	other.Eps0 = 3
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			s := b.open(t)
			defer s.Close()
			mustRegister(t, s, "r1")
			mustRegister(t, s, "r0")
			first := entry("r1", 0, subsampled, "batch 0")
			for _, step := range []struct {
				name    string
				e       Entry
				seen    int64
				existed bool
				err     error // errors.Is target; nil: success
			}{
				{"first", first, 0, false, nil},
				{"retry", first, 1, true, nil},
				{"retry, later time", func() Entry { e := first; e.Time = e.Time.Add(time.Hour); return e }(), 1, true, nil},
				{"retry, stale caller", first, 0, true, nil},
				{"other digest", entry("r1", 0, subsampled, "batch 0'"), 1, false, ErrConflict},
				{"other event", entry("r1", 0, other, "batch 0"), 1, false, ErrConflict},
				{"other reports", func() Entry { e := first; e.Reports--; return e }(), 1, false, ErrConflict},
				{"stale", entry("r1", 2, subsampled, "batch 2"), 0, false, ErrStale},
				{"second", entry("r1", 2, subsampled, "batch 2"), 1, false, nil},
				{"below last", entry("r1", 1, other, "batch 1"), 2, false, nil},
				{"unchecked", entry("r1", 5, subsampled, "batch 5"), -1, false, nil},
				{"unknown run", entry("r9", 0, subsampled, "batch"), 0, false, ErrUnknownRun},
				{"other run, same round", entry("r0", 0, other, "x"), 0, false, nil},
			} {
				existed, err := s.Append(ctx, step.e, step.seen)
				if step.err == nil && err != nil || step.err != nil && !errors.Is(err, step.err) {
					t.Fatalf("%s: Append error %v, want %v", step.name, err, step.err)
				}
				if existed != step.existed {
					t.Fatalf("%s: existed = %v, want %v", step.name, existed, step.existed)
				}
			}
			got, err := s.Entries(ctx, "r1")
			if err != nil {
				t.Fatal(err)
			}
			want := []Entry{first, entry("r1", 1, other, "batch 1"), entry("r1", 2, subsampled, "batch 2"), entry("r1", 5, subsampled, "batch 5")}
			if len(got) != len(want) {
				t.Fatalf("%d entries, want %d: %+v", len(got), len(want), got)
			}
			for i := range want {
				if !got[i].same(want[i]) || !got[i].Time.Equal(want[i].Time) {
					t.Errorf("entry %d = %+v, want %+v", i, got[i], want[i])
				}
			}
			info, err := s.Run(ctx, "r1")
			if err != nil || info.Entries != 4 || info.Delta != 1e-5 || info.Bound != "best" {
				t.Errorf("Run(r1) = %+v, %v; want 4 entries, delta 1e-5, bound best", info, err)
			}
			if runs, err := s.Runs(ctx); err != nil || strings.Join(runs, ",") != "r0,r1" {
				t.Errorf("Runs = %v, %v; want [r0 r1]", runs, err)
			}
			if _, err := s.Run(ctx, "r9"); !errors.Is(err, ErrUnknownRun) {
				t.Errorf("Run(r9) error %v, want ErrUnknownRun", err)
			}
			if err := s.Check(ctx); err != nil {
				t.Errorf("Check: %v", err)
			}
		})
	}
}

func TestStoreRejectsInvalid(t *testing.T) {
	ctx := context.Background()
	good := entry("r", 0, subsampled, "b")
	for _, tc := range []struct {
		name, want string
		mod        func(*Entry)
	}{
		{"empty run", "run", func(e *Entry) { e.Run = "" }},
		{"control character", "control", func(e *Entry) { e.Run = "a\nb" }},
		{"long run", "run", func(e *Entry) { e.Run = strings.Repeat("x", MaxRunLength+1) }},
		{"negative round", "round", func(e *Entry) { e.Round = -1 }},
		{"no reports", "reports", func(e *Entry) { e.Reports = 0 }},
		{"no time", "time", func(e *Entry) { e.Time = time.Time{} }},
		{"bad event", "event", func(e *Entry) { e.Event.Eps0 = -1 }},
		{"unknown mechanism", "event", func(e *Entry) { e.Event.Mechanism = "laplace?" }},
	} {
		for _, b := range backends {
			t.Run(tc.name+"/"+b.name, func(t *testing.T) {
				s := b.open(t)
				defer s.Close()
				mustRegister(t, s, "r")
				e := good
				tc.mod(&e)
				if _, err := s.Append(ctx, e, 0); err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("Append(%s) error %v, want one naming %q", tc.name, err, tc.want)
				}
				if got, _ := s.Entries(ctx, "r"); len(got) != 0 {
					t.Fatalf("an invalid entry was written: %+v", got)
				}
			})
		}
	}
}

func TestRegister(t *testing.T) {
	ctx := context.Background()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			s := b.open(t)
			defer s.Close()
			first, err := s.Register(ctx, RunInfo{Run: "r", Delta: 1e-5, Orders: []float64{3, 2, 64}})
			if err != nil {
				t.Fatal(err)
			}
			if first.Bound != "best" || first.Created.IsZero() || first.Orders[0] != 2 {
				t.Errorf("Register returned %+v; want bound best, a creation time, sorted orders", first)
			}
			again, err := s.Register(ctx, RunInfo{Run: "r", Delta: 1e-6, Bound: "pure-dp"})
			if err != nil {
				t.Fatal(err)
			}
			if again.Delta != 1e-5 || again.Bound != "best" || len(again.Orders) != 3 || !again.Created.Equal(first.Created) {
				t.Errorf("second Register returned %+v, want the first registration %+v", again, first)
			}
			for _, bad := range []RunInfo{
				{Run: "", Delta: 1e-5}, {Run: "r2", Delta: 0}, {Run: "r2", Delta: 1}, {Run: "r2", Delta: 1e-5, Orders: []float64{1}},
				{Run: "r2", Delta: 1e-5, Orders: []float64{2, 2}},
			} {
				if _, err := s.Register(ctx, bad); err == nil {
					t.Errorf("Register(%+v) succeeded", bad)
				}
			}
		})
	}
}

func TestSQLiteReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), FileName)
	s, err := OpenSQLite(ctx, path, SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mustRegister(t, s, "r")
	want := entry("r", 7, subsampled, "b")
	if _, err := s.Append(ctx, want, 0); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, ro := range []bool{false, true} {
		s, err := OpenSQLite(ctx, path, SQLiteOptions{ReadOnly: ro})
		if err != nil {
			t.Fatalf("read-only %v: %v", ro, err)
		}
		got, err := s.Entries(ctx, "r")
		if err != nil || len(got) != 1 || !got[0].same(want) || !got[0].Time.Equal(want.Time) {
			t.Errorf("read-only %v: entries %+v, %v; want [%+v]", ro, got, err, want)
		}
		if err := s.Check(ctx); err != nil {
			t.Errorf("read-only %v: Check: %v", ro, err)
		}
		if ro {
			if _, err := s.Append(ctx, entry("r", 8, subsampled, "c"), 1); err == nil {
				t.Error("a read-only store appended")
			}
		}
		s.Close()
	}
}

func TestSQLiteOpenErrors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if _, err := OpenSQLite(ctx, filepath.Join(dir, "missing", FileName), SQLiteOptions{}); err == nil {
		t.Error("opened a ledger in a missing directory")
	}
	if _, err := OpenSQLite(ctx, filepath.Join(dir, FileName), SQLiteOptions{ReadOnly: true}); err == nil {
		t.Error("opened a missing ledger read-only")
	}
	// A database that is not a ledger.
	other := filepath.Join(dir, "other.db")
	s, err := OpenSQLite(ctx, other, SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.ExecContext(ctx, `UPDATE meta SET value = '99' WHERE key = 'schema_version'`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := OpenSQLite(ctx, other, SQLiteOptions{}); err == nil || !strings.Contains(err.Error(), "schema version 99") {
		t.Errorf("opening a version-99 ledger: error %v, want one naming the version", err)
	}
}

// A path with URI metacharacters is a file name, not a query.
func TestSQLiteOddPath(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "a?b#c%20d")
	if err := mkdir(dir); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, FileName)
	s, err := OpenSQLite(ctx, path, SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !fileExists(path) {
		t.Fatalf("no database at %q", path)
	}
}

// Check finds every kind of damage, in both databases: rows that do not
// decode, counts that disagree, a schema version out of range, and what
// the database itself keeps (SQLite's check constraints and foreign keys,
// PostgreSQL's keys).
func TestCheckFindsCorruption(t *testing.T) {
	ctx := context.Background()
	common := []struct{ name, sql string }{
		{"count", `UPDATE runs SET entries = 5`},
		{"event", `UPDATE entries SET event = '{"mechanism":"subsampled-shuffle","n":-3}'`},
		{"mechanism column", `UPDATE entries SET mechanism = 'shuffle'`},
		{"digest", `UPDATE entries SET digest = 'xyz'`},
		{"time", `UPDATE entries SET created_at = 'yesterday'`},
		{"version", `UPDATE meta SET value = '0' WHERE key = 'schema_version'`},
	}
	own := map[string][]struct{ name, sql string }{
		"sqlite": {
			// The pragmas hold for the store's one connection.
			{"report id", `PRAGMA ignore_check_constraints = 1; INSERT INTO report_id_rounds (run, round, ids) VALUES ('r', 0, x'00')`},
			{"foreign key", `PRAGMA foreign_keys = 0; INSERT INTO entries SELECT 'gone', round, mechanism, event, reports, digest, created_at FROM entries`},
		},
		"postgres": {
			{"unique key", `ALTER TABLE entries DROP CONSTRAINT entries_run_round_key`},
			{"report id key", `ALTER TABLE report_id_rounds DROP CONSTRAINT report_id_rounds_pkey`},
			{"foreign key", `ALTER TABLE entries DROP CONSTRAINT entries_run_fkey`},
		},
	}
	for _, b := range sharedBackends {
		for _, tc := range append(slices.Clone(common), own[b.name]...) {
			t.Run(b.name+"/"+tc.name, func(t *testing.T) {
				s := b.open(t, b.target(t)).(*SQLStore)
				defer s.Close()
				mustRegister(t, s, "r")
				if _, err := s.Append(ctx, entry("r", 0, subsampled, "b"), 0); err != nil {
					t.Fatal(err)
				}
				if err := s.Check(ctx); err != nil {
					t.Fatalf("before %s: %v", tc.sql, err)
				}
				for _, stmt := range strings.Split(tc.sql, ";") {
					if _, err := s.db.ExecContext(ctx, stmt); err != nil {
						t.Fatalf("%s: %v", stmt, err)
					}
				}
				err := s.Check(ctx)
				t.Log(err)
				if !errors.Is(err, ErrCorrupt) {
					t.Errorf("Check after %s: %v, want ErrCorrupt", tc.sql, err)
				}
			})
		}
	}
}

// A version 1 ledger (before report IDs) is read as it is when opened
// read-only, and migrated to SchemaVersion, entries kept, when opened for
// writing.
func TestSQLiteMigratesVersion1(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), FileName)
	db, err := sql.Open("sqlite", dsn(path, SQLiteOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range append(slices.Clone(schema),
		`INSERT INTO meta (key, value) VALUES ('application', 'shuffledp-ledger'), ('schema_version', '1')`,
		`INSERT INTO runs (run, delta, bound, orders, entries, created_at) VALUES ('r', 1e-5, 'best', '', 1, '2026-11-23T10:00:00Z')`,
		`INSERT INTO entries (run, round, mechanism, event, reports, digest, created_at) VALUES ('r', 0, 'subsampled-shuffle',
			'{"mechanism":"subsampled-shuffle","n":60000,"k":1000,"eps0":2}', 1000, '`+digest(0).String()+`', '2026-11-23T10:00:00Z')`,
	) {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	version := func(s *SQLStore) int {
		v, err := s.version(ctx, s.db)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}

	ro, err := OpenSQLite(ctx, path, SQLiteOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if sum, err := Summarize(ctx, ro, "r", 0, false); err != nil || sum.Rounds != 1 {
		t.Errorf("read-only version 1: %+v, %v", sum, err)
	}
	if err := ro.Check(ctx); err != nil {
		t.Errorf("read-only version 1: Check: %v", err)
	}
	if _, err := ro.ClaimReportIDs(ctx, "r", 1, ids(1)); err == nil {
		t.Error("a read-only store claimed report IDs")
	}
	if v := version(ro); v != 1 {
		t.Errorf("a read-only open changed the version to %d", v)
	}
	ro.Close()

	s, err := OpenSQLite(ctx, path, SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if v := version(s); v != SchemaVersion {
		t.Errorf("version %d after opening for writing, want %d", v, SchemaVersion)
	}
	if got, err := s.Entries(ctx, "r"); err != nil || len(got) != 1 || got[0].Digest != digest(0) {
		t.Errorf("entries after the migration: %+v, %v", got, err)
	}
	if got, err := s.ClaimReportIDs(ctx, "r", 1, ids(1, 1)); err != nil || !slices.Equal(got, ids(1)) {
		t.Errorf("claim after the migration: %v, %v", got, err)
	}
	if err := s.Check(ctx); err != nil {
		t.Error(err)
	}
}
