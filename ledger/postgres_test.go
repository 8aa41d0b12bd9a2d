package ledger

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shuffledp/shuffledp/internal/pgtest"
)

func TestIsPostgresURL(t *testing.T) {
	for target, want := range map[string]bool{
		"postgres://u@h/db":         true,
		"postgresql://h:5432/db":    true,
		"POSTGRES://h/db":           true,
		"PostgreSQL://h/db":         true,
		"postgres:/h/db":            false,
		"postgresx://h/db":          false,
		"ledger.db":                 false,
		"/state/ledger.db":          false,
		"host=localhost dbname=led": false,
		"":                          false,
	} {
		if got := IsPostgresURL(target); got != want {
			t.Errorf("IsPostgresURL(%q) = %v, want %v", target, got, want)
		}
	}
}

func TestOpenStore(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := OpenStore(ctx, filepath.Join(dir, FileName), StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st, ok := s.(*SQLStore); !ok || st.d.name != "sqlite" {
		t.Errorf("a file path opened a %T (%v)", s, s)
	}
	s.Close()
	if _, err := OpenStore(ctx, dir, StoreOptions{}); err == nil || !strings.Contains(err.Error(), "directory") {
		t.Errorf("a directory: %v, want an error saying it is a directory", err)
	}
	if _, err := OpenStore(ctx, "", StoreOptions{}); err == nil {
		t.Error("an empty target opened")
	}
	if _, err := OpenStore(ctx, filepath.Join(dir, "missing.db"), StoreOptions{ReadOnly: true}); err == nil {
		t.Error("a missing file opened read-only")
	}
	url := pgtest.NewSchema(t)
	for _, u := range []string{url, "postgresql" + strings.TrimPrefix(url, "postgres"), "POSTGRES" + strings.TrimPrefix(url, "postgres")} {
		s, err := OpenStore(ctx, u, StoreOptions{})
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		if st, ok := s.(*SQLStore); !ok || st.d.name != "postgres" {
			t.Errorf("%s opened a %T (%v)", u, s, s)
		}
		s.Close()
	}
}

// A server that does not answer is an error naming the URL without its
// password, after the connect timeout.
func TestOpenPostgresUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	ctx := context.Background()
	for _, u := range []string{
		"postgres://shuffler:s3cret-pw@" + addr + "/ledger?sslmode=disable",
		"postgres://shuffler@" + addr + "/ledger?sslmode=disable&password=s3cret-pw",
	} {
		start := time.Now()
		_, err := OpenPostgres(ctx, u, PostgresOptions{ConnectTimeout: 2 * time.Second})
		if err == nil {
			t.Fatalf("%s: opened", u)
		}
		if strings.Contains(err.Error(), "s3cret-pw") {
			t.Errorf("the error shows the password: %v", err)
		}
		if !strings.Contains(err.Error(), addr) {
			t.Errorf("the error does not name the server %s: %v", addr, err)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("took %v", d)
		}
	}
	if _, err := OpenPostgres(ctx, "postgres://h:notaport/db", PostgresOptions{}); err == nil {
		t.Error("a malformed URL opened")
	}
	if _, err := OpenPostgres(ctx, "/tmp/ledger.db", PostgresOptions{}); err == nil {
		t.Error("a file path opened as PostgreSQL")
	}
}

// pgExec runs statements in the schema of url.
func pgExec(t *testing.T, url string, stmts ...string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, stmt := range stmts {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
}

func TestPostgresReadOnly(t *testing.T) {
	ctx := context.Background()
	url := pgtest.NewSchema(t)
	if _, err := OpenPostgres(ctx, url, PostgresOptions{ReadOnly: true}); err == nil || !strings.Contains(err.Error(), "not a shuffledp ledger") {
		t.Errorf("read-only open of an empty schema: %v, want 'not a shuffledp ledger'", err)
	}
	s, err := OpenPostgres(ctx, url, PostgresOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mustRegister(t, s, "r")
	if _, err := s.Append(ctx, entry("r", 0, subsampled, "b"), 0); err != nil {
		t.Fatal(err)
	}
	s.Close()
	ro, err := OpenPostgres(ctx, url, PostgresOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if sum, err := Summarize(ctx, ro, "r", 0, false); err != nil || sum.Rounds != 1 {
		t.Errorf("read-only summary: %+v, %v", sum, err)
	}
	if err := ro.Check(ctx); err != nil {
		t.Errorf("read-only Check: %v", err)
	}
	if _, err := ro.Register(ctx, RunInfo{Run: "r2", Delta: 1e-5}); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("read-only Register: %v", err)
	}
	if _, err := ro.Append(ctx, entry("r", 1, subsampled, "c"), 1); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("read-only Append: %v", err)
	}
	if _, err := ro.ClaimReportIDs(ctx, "r", 1, ids(1)); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("read-only ClaimReportIDs: %v", err)
	}
	// The server refuses writes too: every transaction is READ ONLY.
	if _, err := ro.db.ExecContext(ctx, `DELETE FROM entries`); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("a DELETE through the read-only pool: %v", err)
	}
}

// A version 1 schema is migrated on open for writing (and read as is
// read-only); a newer version is refused, naming it.
func TestPostgresSchemaVersions(t *testing.T) {
	ctx := context.Background()
	url := pgtest.NewSchema(t)
	pgExec(t, url, append(schema,
		`INSERT INTO meta (key, value) VALUES ('application', 'shuffledp-ledger'), ('schema_version', '1')`,
		`INSERT INTO runs (run, delta, bound, orders, entries, created_at) VALUES ('r', 1e-5, 'best', '', 0, '2026-11-23T10:00:00Z')`)...)
	ro, err := OpenPostgres(ctx, url, PostgresOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if v, err := ro.version(ctx, ro.db); v != 1 || err != nil {
		t.Errorf("read-only: version %d, %v; want 1", v, err)
	}
	ro.Close()
	// Shufflers opening the database at once migrate it once.
	errs := make(chan error, 3)
	for range 3 {
		go func() {
			s, err := OpenPostgres(ctx, url, PostgresOptions{})
			if err == nil {
				s.Close()
			}
			errs <- err
		}()
	}
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	s, err := OpenPostgres(ctx, url, PostgresOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v, err := s.version(ctx, s.db); v != SchemaVersion || err != nil {
		t.Errorf("after the migration: version %d, %v; want %d", v, err, SchemaVersion)
	}
	if got, err := s.ClaimReportIDs(ctx, "r", 0, ids(1)); err != nil || got != nil {
		t.Errorf("claim after the migration: %v, %v", got, err)
	}
	if err := s.Check(ctx); err != nil {
		t.Error(err)
	}
	s.Close()
	pgExec(t, url, `UPDATE meta SET value = '99' WHERE key = 'schema_version'`)
	for _, ro := range []bool{false, true} {
		if _, err := OpenPostgres(ctx, url, PostgresOptions{ReadOnly: ro}); err == nil || !strings.Contains(err.Error(), "schema version 99") {
			t.Errorf("read-only %v: opening a version-99 ledger: %v, want an error naming the version", ro, err)
		}
	}
	other := pgtest.NewSchema(t)
	pgExec(t, other, `CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`, `INSERT INTO meta VALUES ('application', 'something else')`)
	if _, err := OpenPostgres(ctx, other, PostgresOptions{}); err == nil || !strings.Contains(err.Error(), "not a shuffledp ledger") {
		t.Errorf("another application's meta table: %v", err)
	}
}

// The ledger lives in the schema the URL's search_path names: two
// schemas of one database are two ledgers.
func TestPostgresSearchPath(t *testing.T) {
	ctx := context.Background()
	var stores [2]*SQLStore
	for i := range stores {
		s, err := OpenPostgres(ctx, pgtest.NewSchema(t), PostgresOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		stores[i] = s
		mustRegister(t, s, fmt.Sprintf("run-%d", i))
	}
	for i, s := range stores {
		runs, err := s.Runs(ctx)
		if err != nil || len(runs) != 1 || runs[0] != fmt.Sprintf("run-%d", i) {
			t.Errorf("schema %d has runs %v, %v", i, runs, err)
		}
	}
}
