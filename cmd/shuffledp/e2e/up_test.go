package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shuffledp/shuffledp/internal/clitest"
)

// upAccountEpsilon returns `account`'s epsilon for the run's event and steps.
func upAccountEpsilon(t *testing.T, steps string) float64 {
	t.Helper()
	acc, err := runCmd(t, "account", "--bound", "best", "--n", "60", "--k", "10", "--eps0", "2", "--steps", steps, "--delta", "1e-5", "--json")
	if err != nil {
		t.Fatalf("account: %v\n%s", err, acc)
	}
	var a struct {
		Epsilon float64 `json:"epsilon"`
	}
	if err := json.Unmarshal([]byte(acc), &a); err != nil {
		t.Fatalf("%v\n%s", err, acc)
	}
	return a.Epsilon
}

// lastMetrics returns the last record of a metrics file and the number of
// records.
func lastMetrics(t *testing.T, path string) (map[string]any, int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var last map[string]any
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		last = nil
		if err := json.Unmarshal(sc.Bytes(), &last); err != nil {
			t.Fatalf("%s line %d: %v", path, n+1, err)
		}
		n++
	}
	return last, n
}

// TestUpInterruptResumeAgreesWithAccount runs `up` (server, shuffler and
// client pool as separate processes), stops it with SIGINT after its first
// released rounds, reruns the same command to finish, and checks the
// metrics and that `ledger show` gives account's epsilon for the rounds
// the ledger debited.
func TestUpInterruptResumeAgreesWithAccount(t *testing.T) {
	state := filepath.Join(t.TempDir(), "run")
	args := append(append([]string{"up"}, clitest.UpRun...), "--epochs", "3", "--state", state, "--client-processes", "2", "--release-when-complete")

	// First run: interrupt it once a round was released.
	cmd := child(nil, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) && !strings.Contains(out.String(), "round 2 released") {
		time.Sleep(10 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	t.Logf("interrupted up: %v", err)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		if !strings.Contains(out.String(), "up: run finished") { // too fast to interrupt: fine, still checked below
			t.Fatalf("interrupted up: %v, want exit 130\n%s", err, out.String())
		}
	}
	// Second run: resumes and finishes.
	out2, err := child(nil, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("resumed up: %v\n%s", err, out2)
	}
	if !strings.Contains(string(out2), "up: run finished") {
		t.Fatalf("resumed up did not finish:\n%s", out2)
	}
	// The run ends at its 18 rounds, or short of them when a batch was
	// debited and not applied at the interrupt: the shuffler's ledger
	// then holds the 18 planned, never more, and it stops the run.
	applied, ended := runEnded(string(out2), 18)
	last, n := lastMetrics(t, filepath.Join(state, "metrics.jsonl"))
	if !ended || n < 2 || last["round"] != float64(applied) || last["epsilon"] == nil || last["test_accuracy"] == nil {
		t.Fatalf("metrics: %d records, last %v; the server applied %d rounds (ended %v)", n, last, applied, ended)
	}
	rounds, eps, delta := clitest.LedgerShow(t, state)
	if rounds != 18 || delta != 1e-5 {
		t.Fatalf("ledger show: %d rounds at delta %v, want the 18 planned at 1e-5", rounds, delta)
	}
	if want := upAccountEpsilon(t, strings.TrimSpace(strconvI(rounds))); eps != want || !(eps > 0) {
		t.Fatalf("ledger show epsilon %v over %d rounds, account %v", eps, rounds, want)
	}
	if got := last["epsilon"].(float64); got != eps || last["ledger_rounds"] != float64(rounds) {
		t.Fatalf("metrics epsilon %v over %v rounds, ledger %v over %d", got, last["ledger_rounds"], eps, rounds)
	}
}

func strconvI(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// waitFile waits for a child's --addr-file.
func waitFile(t *testing.T, path string, c *exec.Cmd, out *bytes.Buffer) string {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if b, err := os.ReadFile(path); err == nil && bytes.HasSuffix(b, []byte("\n")) {
			return strings.TrimSpace(string(b))
		}
		if c.ProcessState != nil {
			break
		}
	}
	t.Fatalf("%s never written\n%s", path, out.String())
	return ""
}

// TestRolesByHand starts the three role commands by hand, each its own
// process on its own port, with a PKI and credentials made by `pki init`
// and `pki enrol`, and checks that the run completes and the shuffler's
// ledger agrees with account.
func TestRolesByHand(t *testing.T) {
	dir := t.TempDir()
	pkiDir, state, srvState := filepath.Join(dir, "pki"), filepath.Join(dir, "shuffler"), filepath.Join(dir, "server")
	creds := filepath.Join(dir, "creds.json")
	if out, err := runCmd(t, "pki", "init", "--dir", pkiDir); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if out, err := runCmd(t, "pki", "enrol", "--dir", pkiDir, "--clients", "0:60", "--out", creds); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	start := func(args ...string) (*exec.Cmd, *bytes.Buffer) {
		c := child(nil, args...)
		var out bytes.Buffer
		c.Stdout, c.Stderr = &out, &out
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Process.Kill(); c.Wait() })
		return c, &out
	}
	srvArgs := append([]string{"server", "--listen", "127.0.0.1:0", "--addr-file", filepath.Join(dir, "srv.addr"),
		"--state", srvState, "--pki", filepath.Join(pkiDir, "server"), "--epochs", "1"}, clitest.UpRun...)
	srv, srvOut := start(srvArgs...)
	srvAddr := waitFile(t, filepath.Join(dir, "srv.addr"), srv, srvOut)
	sh, shOut := start("shuffler", "--listen", "127.0.0.1:0", "--addr-file", filepath.Join(dir, "sh.addr"),
		"--server", srvAddr, "--state", state, "--pki", filepath.Join(pkiDir, "shuffler"), "--release-when-complete")
	shAddr := waitFile(t, filepath.Join(dir, "sh.addr"), sh, shOut)
	cl, clOut := start("client", "--shuffler", shAddr, "--server", srvAddr, "--clients", "0:60", "--workers", "2",
		"--pki", filepath.Join(pkiDir, "client"), "--credentials", creds)
	for _, p := range []struct {
		c   *exec.Cmd
		out *bytes.Buffer
	}{{srv, srvOut}, {sh, shOut}, {cl, clOut}} {
		if err := p.c.Wait(); err != nil {
			t.Fatalf("%v: %v\nserver:\n%s\nshuffler:\n%s\nclient:\n%s", p.c.Args[1], err, srvOut, shOut, clOut)
		}
	}
	if !strings.Contains(srvOut.String(), "stopped (epochs) after round 6") {
		t.Fatalf("server output:\n%s", srvOut)
	}
	if !strings.Contains(clOut.String(), "60 reports accepted") {
		t.Fatalf("client output:\n%s", clOut)
	}
	rounds, eps, _ := clitest.LedgerShow(t, state)
	if want := upAccountEpsilon(t, "6"); rounds != 6 || eps != want {
		t.Fatalf("ledger show: %d rounds, epsilon %v; account over 6 rounds %v", rounds, eps, want)
	}
	last, _ := lastMetrics(t, filepath.Join(srvState, "metrics.jsonl"))
	if last["epsilon"].(float64) != eps {
		t.Fatalf("server metrics epsilon %v, shuffler ledger %v", last["epsilon"], eps)
	}
}
