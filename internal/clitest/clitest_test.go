package clitest

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// TestRunReportsOutputAndErrors builds the command and runs it: a success
// returns its output; a usage error returns an ExitError with status 2 and
// the command's message.
func TestRunReportsOutputAndErrors(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	dir := t.TempDir()
	exe, err := Build(Package, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer func(old string) { Exe = old }(Exe)
	Exe = exe
	out, err := Run("--help")
	if err != nil || !strings.Contains(out, "Available Commands") {
		t.Fatalf("--help: %v\n%s", err, out)
	}
	out, err = Run("bogus")
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != 2 || !strings.Contains(ee.Stderr, `unknown subcommand "bogus"`) || !strings.Contains(out, "bogus") ||
		!strings.HasPrefix(ee.Message(), `shuffledp: unknown subcommand "bogus"`) {
		t.Fatalf("bogus: %v (%#v)\n%s", err, ee, out)
	}
	if _, err := os.Stat(exe); err != nil {
		t.Fatal(err)
	}
}
