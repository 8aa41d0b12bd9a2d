package statedir

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/shuffledp/shuffledp/ledger"
)

// TestSession: a fresh directory has no checkpoint; a written checkpoint
// reads back after a reopen (which is a resume, of the same run, with its
// ledger); the directory is locked while a session holds it; a run without
// a ledger has none; a reopen with other flags is refused.
func TestSession(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "run")
	sc := SessionConfig{Dir: dir, Flags: map[string]string{"eps0": "1"}, Ledger: &ledger.Options{Delta: 1e-5}}
	s, err := OpenSession(ctx, sc)
	if err != nil {
		t.Fatal(err)
	}
	if s.Resumed() || s.Ledger() == nil || s.Ledger().Run() != s.Run() || s.Receipts() == nil {
		t.Fatalf("fresh session: resumed %v, ledger %v", s.Resumed(), s.Ledger())
	}
	if _, err := s.ReadCheckpoint(); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("checkpoint of a fresh run: %v, want os.ErrNotExist", err)
	}
	if err := s.WriteCheckpoint([]byte("state")); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendMetrics(3, map[string]int{"round": 3}); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenSession(ctx, sc); !errors.Is(err, ErrLocked) {
		t.Fatalf("second session on a held directory: %v, want ErrLocked", err)
	}
	run := s.Run()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := OpenSession(ctx, SessionConfig{Dir: dir, Flags: map[string]string{"eps0": "2"}}); !errors.Is(err, ErrFlagMismatch) {
		t.Fatalf("resume with another eps0: %v, want ErrFlagMismatch", err)
	}
	sc.Ledger = nil
	s, err = OpenSession(ctx, sc)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	b, err := s.ReadCheckpoint()
	if !s.Resumed() || s.Run() != run || string(b) != "state" || err != nil || s.Ledger() != nil {
		t.Fatalf("resumed session: resumed %v, run %q (want %q), checkpoint %q (%v), ledger %v", s.Resumed(), s.Run(), run, b, err, s.Ledger())
	}
	if _, err := os.Stat(filepath.Join(dir, ReceiptsFile)); err != nil {
		t.Errorf("receipt log: %v", err)
	}
}
