package statedir

import (
	"os"
	"path/filepath"
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
