package statedir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFreshPathsRemovesOnlyWhatWasAbsent: a path that existed before the
// start is kept, one created by it removed, "" skipped.
func TestFreshPathsRemovesOnlyWhatWasAbsent(t *testing.T) {
	dir := t.TempDir()
	old, fresh := filepath.Join(dir, "old"), filepath.Join(dir, "fresh")
	if err := os.Mkdir(old, 0o755); err != nil {
		t.Fatal(err)
	}
	fp := NewFreshPaths(old, "", fresh)
	if len(fp) != 1 || fp[0] != fresh {
		t.Fatalf("NewFreshPaths = %q, want [%s]", fp, fresh)
	}
	if err := os.Mkdir(fresh, 0o755); err != nil {
		t.Fatal(err)
	}
	fp.Remove()
	if _, err := os.Stat(old); err != nil {
		t.Errorf("the path that existed was removed: %v", err)
	}
	if _, err := os.Stat(fresh); !os.IsNotExist(err) {
		t.Errorf("the fresh path is still there: %v", err)
	}
}

// TestCheckOutputFiles: empty paths are skipped, each output is checked as
// CheckOutputFile checks it, and two flags naming one file are refused
// naming both.
func TestCheckOutputFiles(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.png"), filepath.Join(dir, "b.csv")
	if err := CheckOutputFiles("out", a, "csv", ""); err != nil {
		t.Errorf("one output: %v", err)
	}
	if err := CheckOutputFiles("out", a, "csv", b); err != nil {
		t.Errorf("two outputs: %v", err)
	}
	if err := CheckOutputFiles("out", a, "csv", filepath.Join(dir, ".", "a.png")); err == nil || !strings.Contains(err.Error(), "--csv") || !strings.Contains(err.Error(), "--out") {
		t.Errorf("one file twice: %v", err)
	}
	if err := CheckOutputFiles("csv", filepath.Join(dir, "no", "b.csv")); err == nil || !strings.Contains(err.Error(), "--csv") {
		t.Errorf("missing directory: %v", err)
	}
	if _, err := os.Stat(a); !os.IsNotExist(err) {
		t.Errorf("a check created %s", a)
	}
}
