package node

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/internal/pgtest"
	"github.com/shuffledp/shuffledp/ledger"
	"github.com/shuffledp/shuffledp/statedir"
)

// debitRounds opens the shuffler state dir, registers run in its ledger
// (as Shuffler.Run does: CheckRun, ledger.Open, BindRun) and debits rounds
// 1..rounds.
func debitRounds(t *testing.T, dir, run string, rounds int) {
	t.Helper()
	ctx := context.Background()
	st, err := OpenShufflerState(ctx, dir, "")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.CheckRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	l, err := ledger.Open(ctx, st.Store, run, ledger.Options{Delta: 1e-5})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.BindRun(run); err != nil {
		t.Fatal(err)
	}
	ev := event.Event{Mechanism: event.SubsampledShuffle, N: 1000, K: 100, Eps0: 1}
	for r := l.LastRound() + 1; r <= int64(rounds); r++ {
		if err := l.Debit(ctx, r, ev, 100, ledger.Digest{byte(r)}); err != nil {
			t.Fatal(err)
		}
	}
}

// snapshot is every file of dir (but the lock) with its contents.
func snapshot(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name() == statedir.LockFile {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = b
	}
	return out
}

// TestShufflerStateRefusesLostLedger: once a state directory has debited a
// run, a ledger file that is removed, emptied, or replaced by another
// run's is refused at open, naming the file and saying how to recover, and
// nothing in the directory is created or changed; a copy of the run's own
// ledger (a backup restored) is accepted.
func TestShufflerStateRefusesLostLedger(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	other := filepath.Join(base, "other")
	debitRounds(t, other, "otherrun", 2)
	otherLedger, err := os.ReadFile(filepath.Join(other, ledger.FileName))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		breakIt func(t *testing.T, file string)
		want    string
	}{
		{"removed", func(t *testing.T, file string) { os.Remove(file) }, "is missing"},
		{"truncated", func(t *testing.T, file string) { os.Truncate(file, 0) }, "is empty (0 bytes)"},
		{"another run's", func(t *testing.T, file string) { os.WriteFile(file, otherLedger, 0o644) }, "another run's ledger"},
		{"not a ledger", func(t *testing.T, file string) { os.WriteFile(file, []byte("not sqlite"), 0o644) }, "cannot be read"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "shuf")
			debitRounds(t, dir, "run1", 7)
			file := filepath.Join(dir, ledger.FileName)
			os.Remove(file + "-wal")
			os.Remove(file + "-shm")
			c.breakIt(t, file)
			before := snapshot(t, dir)
			_, err := OpenShufflerState(ctx, dir, "")
			if !errors.Is(err, ErrLedgerHistory) {
				t.Fatalf("open: %v; want ErrLedgerHistory", err)
			}
			for _, w := range []string{c.want, file, "run1", "restore the ledger from a backup"} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			after := snapshot(t, dir)
			if len(after) != len(before) {
				t.Errorf("files before %d, after %d: the refused open created or removed some", len(before), len(after))
			}
			for name, b := range before {
				if !bytes.Equal(after[name], b) {
					t.Errorf("%s changed by the refused open", name)
				}
			}
		})
	}
	t.Run("backup restored", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "shuf")
		debitRounds(t, dir, "run1", 3)
		file := filepath.Join(dir, ledger.FileName)
		backup, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		os.Remove(file)
		if err := os.WriteFile(file, backup, 0o644); err != nil {
			t.Fatal(err)
		}
		debitRounds(t, dir, "run1", 5)
	})
}

// TestShufflerStateRunLost: a ledger of the right id that lacks a run the
// directory debited (its rows gone) is refused by CheckRun; a run the
// directory never debited is not checked.
func TestShufflerStateRunLost(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "shuf")
	debitRounds(t, dir, "run1", 2)
	st, err := OpenShufflerState(ctx, dir, "")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.CheckRun(ctx, "run1"); err != nil {
		t.Fatalf("run1 is in its ledger: %v", err)
	}
	if err := st.CheckRun(ctx, "run2"); err != nil {
		t.Fatalf("a run new to the directory: %v", err)
	}
	// Record a run that the ledger never registered, as if its rows were
	// lost: the manifest lists it, the ledger does not have it.
	b := st.Ledger()
	b.Runs = append(b.Runs, "run3")
	if err := st.dir.SetLedger(b); err != nil {
		t.Fatal(err)
	}
	err = st.CheckRun(ctx, "run3")
	if !errors.Is(err, ErrLedgerHistory) || !strings.Contains(err.Error(), "run3") || !strings.Contains(err.Error(), ledger.FileName) {
		t.Fatalf("CheckRun of a lost run: %v", err)
	}
}

// TestShufflerStateBindsOnce: the first open records the ledger's id and
// file; reopening keeps the record; a directory written before records
// existed (no ledger in run.json) adopts the ledger it finds.
func TestShufflerStateBindsOnce(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "shuf")
	debitRounds(t, dir, "run1", 1)
	st, err := OpenShufflerState(ctx, dir, "")
	if err != nil {
		t.Fatal(err)
	}
	b := st.Ledger()
	id, _ := st.Store.(ledger.Identifier).Identity(ctx)
	if b.ID == "" || b.ID != id || b.File != ledger.FileName || len(b.Runs) != 1 || b.Runs[0] != "run1" {
		t.Fatalf("binding %+v, ledger id %q", b, id)
	}
	st.Close()
	// Remove the record, as in a directory of an older version.
	m, err := os.ReadFile(filepath.Join(dir, statedir.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(m, []byte(`,
  "ledger"`))
	if i < 0 {
		t.Fatalf("no ledger record in %s", m)
	}
	if err := os.WriteFile(filepath.Join(dir, statedir.ManifestFile), append(m[:i:i], []byte("\n}\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err = OpenShufflerState(ctx, dir, "")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if got := st.Ledger(); got.ID != id || len(got.Runs) != 0 {
		t.Fatalf("adopted binding %+v, want ledger %s and no run yet", got, id)
	}
}

// TestShufflerStatePostgres: a state directory bound to a PostgreSQL
// ledger refuses another database in its place (a new, empty one) and a
// start without --ledger; one bound to its file refuses --ledger; the
// right database is accepted again.
func TestShufflerStatePostgres(t *testing.T) {
	ctx := context.Background()
	url, other := pgtest.NewSchema(t), pgtest.NewSchema(t)
	dir := filepath.Join(t.TempDir(), "shuf")
	st, err := OpenShufflerState(ctx, dir, url)
	if err != nil {
		t.Fatal(err)
	}
	if b := st.Ledger(); b.File != "" || b.Postgres == "" || b.ID == "" {
		t.Fatalf("binding %+v: want the PostgreSQL ledger's", b)
	}
	st.Close()
	empty := pgtest.NewSchema(t)
	if o, err := ledger.OpenStore(ctx, other, ledger.StoreOptions{}); err != nil { // another ledger, with its own id
		t.Fatal(err)
	} else {
		o.Close()
	}
	for _, c := range []struct{ url, want string }{
		{other, "another run's ledger, or a new one"},
		{empty, "cannot be read"},
		{"", "pass that ledger as --ledger"},
	} {
		if _, err := OpenShufflerState(ctx, dir, c.url); !errors.Is(err, ErrLedgerHistory) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("--ledger %q: %v; want ErrLedgerHistory saying %q", c.url, err, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ledger.FileName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused start created %s", ledger.FileName)
	}
	st, err = OpenShufflerState(ctx, dir, url)
	if err != nil {
		t.Fatalf("the bound database again: %v", err)
	}
	st.Close()
	fileDir := filepath.Join(t.TempDir(), "file")
	debitRounds(t, fileDir, "run1", 1)
	if _, err := OpenShufflerState(ctx, fileDir, url); !errors.Is(err, ErrLedgerHistory) || !strings.Contains(err.Error(), "not in --ledger") {
		t.Errorf("a file-bound directory with --ledger: %v", err)
	}
}
