// Package clitest runs the shuffledp command as a separate process, for the
// test packages whose tests need real processes (kill loops, networked
// runs, lifecycle, browsers): such a package's TestMain calls Main, which
// builds cmd/shuffledp once with `go build` into a temporary directory, and
// its tests start the binary with Command or run a subcommand to its end
// with Run. Keeping those tests in packages of their own
// (cmd/shuffledp/e2e, cmd/shuffledp/browser, cmd/shuffledp/calibration)
// keeps each package's test time well within go test's per-package timeout
// on a busy machine.
package clitest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// Package is the import path of the command Main builds.
const Package = "github.com/shuffledp/shuffledp/cmd/shuffledp"

// Exe is the path of the binary Main built ("" before).
var Exe string

// goTool is the go command of the toolchain running the tests.
func goTool() string {
	if p := filepath.Join(runtime.GOROOT(), "bin", "go"); fileExists(p) {
		return p
	}
	return "go"
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// Build compiles the package pkg into dir and returns the binary's path.
func Build(pkg, dir string) (string, error) {
	exe := filepath.Join(dir, filepath.Base(pkg))
	cmd := exec.Command(goTool(), "build", "-o", exe, pkg)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
	}
	return exe, nil
}

// Main is a test package's TestMain: it builds the command into a
// temporary directory (Exe), runs the tests and removes the directory.
func Main(m *testing.M) {
	dir, err := os.MkdirTemp("", "shuffledp-clitest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if Exe, err = Build(Package, dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// Command returns the command running `shuffledp args...` with the test's
// environment and env added.
func Command(env []string, args ...string) *exec.Cmd {
	if Exe == "" {
		panic("clitest: Command before Main built the binary")
	}
	cmd := exec.Command(Exe, args...)
	cmd.Env = append(os.Environ(), env...)
	return cmd
}

// Run runs `shuffledp args...` to its end and returns what it printed
// (stdout and stderr, as the command's own writers share one buffer in
// in-process tests); on failure the error holds the exit status and what
// the command printed to stderr (its "shuffledp: ..." message), so that a
// test can check the message as it would the command's error.
func Run(args ...string) (string, error) {
	cmd := Command(nil, args...)
	var out, stderr bytes.Buffer
	var mu sync.Mutex // exec copies stdout and stderr in two goroutines
	cmd.Stdout = &lockedWriter{&mu, &out, nil}
	cmd.Stderr = &lockedWriter{&mu, &out, &stderr}
	err := cmd.Run()
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			return out.String(), err
		}
		return out.String(), &ExitError{Code: ee.ExitCode(), Stderr: strings.TrimSpace(stderr.String())}
	}
	return out.String(), nil
}

// ExitError is a command that exited with a status other than 0.
type ExitError struct {
	Code   int
	Stderr string
}

func (e *ExitError) Error() string {
	return fmt.Sprintf("exit status %d: %s", e.Code, e.Stderr)
}

// Message is the command's error as it returned it: the last line of its
// stderr without the "shuffledp: " the binary puts before it.
func (e *ExitError) Message() string {
	lines := strings.Split(e.Stderr, "\n")
	return strings.TrimPrefix(lines[len(lines)-1], "shuffledp: ")
}

// lockedWriter writes to all and, if set, to also, under mu.
type lockedWriter struct {
	mu        *sync.Mutex
	all, also *bytes.Buffer
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.also != nil {
		w.also.Write(p)
	}
	return w.all.Write(p)
}

// UpRun is the tiny networked run of the tests of `up` and of the
// dashboards: 60 clients, 10 per round, logistic regression on synthetic
// data, an evaluation every 6 rounds (3 epochs: 18 rounds).
var UpRun = []string{"--dataset", "synthetic", "--model", "logreg", "--clients", "60", "--sample", "10",
	"--eps0", "2", "--eval-every", "6", "--no-progress"}

// LedgerShow returns `ledger show --state dir --json`'s rounds, epsilon and
// delta.
func LedgerShow(t testing.TB, dir string) (rounds int64, eps, delta float64) {
	t.Helper()
	show, err := Run("ledger", "show", "--state", dir, "--json")
	if err != nil {
		t.Fatalf("ledger show: %v\n%s", err, show)
	}
	var ls struct {
		Rounds  int64   `json:"rounds"`
		Epsilon float64 `json:"epsilon"`
		Delta   float64 `json:"delta"`
	}
	if err := json.Unmarshal([]byte(show), &ls); err != nil {
		t.Fatalf("%v\n%s", err, show)
	}
	return ls.Rounds, ls.Epsilon, ls.Delta
}

// FreeAddr returns a loopback address with a port that was free a moment
// ago (for a role restarted on the same address).
func FreeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
