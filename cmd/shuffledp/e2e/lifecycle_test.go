package e2e

import (
	"bytes"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/shuffledp/shuffledp/node"
)

// tinyUpRun is the smallest networked run: 20 clients, 5 a round, one
// epoch (4 rounds) of logistic regression on synthetic data.
var tinyUpRun = []string{"up", "--dataset", "synthetic", "--model", "logreg", "--clients", "20", "--sample", "5",
	"--eps0", "2", "--epochs", "1", "--eval-every", "4", "--test-size", "50", "--no-progress", "--release-when-complete"}

// runTimed runs cmd, kills it after limit, and returns its combined
// output, its exit status (-1: killed at the limit) and how long it ran.
func runTimed(t *testing.T, cmd *exec.Cmd, limit time.Duration) (string, int, time.Duration) {
	t.Helper()
	var out lockedWriter
	out.b = &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String(), code, time.Since(start)
	case <-time.After(limit):
		cmd.Process.Kill()
		<-done
		return out.String(), -1, time.Since(start)
	}
}

// TestUpRerunFinishedExitsAtOnce runs `up` to the end, then runs the same
// command again on the finished state directory: it must say the run is
// finished and exit 0 at once (it used to wait forever, deaf to SIGINT),
// and leave no child behind. The state directory's parent does not exist
// at first: up creates it.
func TestUpRerunFinishedExitsAtOnce(t *testing.T) {
	state := filepath.Join(t.TempDir(), "runs", "x")
	args := append(append([]string{}, tinyUpRun...), "--state", state)
	out, code, took := runTimed(t, child(nil, args...), time.Minute)
	if code != 0 || !strings.Contains(out, "up: run finished") {
		t.Fatalf("first up: exit %d after %v\n%s", code, took, out)
	}
	// "At once" against "forever": a minute is far above a start on a
	// busy machine (the first run, training included, gets as long).
	out, code, took = runTimed(t, child(nil, args...), time.Minute)
	if code != 0 || !strings.Contains(out, "already finished: 4 of 4 rounds done") || !strings.Contains(out, "up: run finished") {
		t.Fatalf("rerun of a finished run: exit %d after %v, want 0 with \"already finished\" (-1: still running, killed)\n%s", code, took, out)
	}
	assertUnlocked(t, state)
	assertUnlocked(t, filepath.Join(state, "server"))
}

// assertUnlocked checks that no process holds the state directory's lock
// (waiting up to 30 s: the kernel releases a killed process's locks as it
// exits, which a busy machine may delay).
func assertUnlocked(t *testing.T, dir string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(f.Name())
			t.Fatalf("%s still locked (by pid %s): %v", dir, strings.TrimSpace(string(b)), err)
		}
	}
	unix.Flock(int(f.Fd()), unix.LOCK_UN)
}

// processesNaming returns the live processes (not zombies) whose command
// line contains s.
func processesNaming(s string) []int {
	ds, _ := os.ReadDir("/proc")
	var pids []int
	for _, d := range ds {
		pid, err := strconv.Atoi(d.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile("/proc/" + d.Name() + "/cmdline")
		if err != nil || !bytes.Contains(b, []byte(s)) {
			continue
		}
		st, err := os.ReadFile("/proc/" + d.Name() + "/stat")
		if err != nil {
			continue
		}
		// The state follows the command name in parentheses.
		if i := bytes.LastIndexByte(st, ')'); i >= 0 && i+2 < len(st) && st[i+2] == 'Z' {
			continue
		}
		pids = append(pids, pid)
	}
	return pids
}

// TestUpKilledLeavesNoChild kills `up` with SIGKILL in the middle of a run
// and checks that its server and shuffler die with it (they used to keep
// running, the server holding its state directory's lock) and that both
// state directories are unlocked.
func TestUpKilledLeavesNoChild(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs Linux (parent-death signal, /proc)")
	}
	state := filepath.Join(t.TempDir(), "run")
	args := append(append([]string{}, tinyUpRun...), "--state", state, "--epochs", "50")
	cmd := child(nil, args...)
	var out lockedWriter
	out.b = &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) && !strings.Contains(out.String(), "round 1 released") {
		time.Sleep(10 * time.Millisecond)
	}
	children := processesNaming(state)
	if len(children) < 3 { // server, shuffler, a client process
		t.Fatalf("up's children naming %s: %v\n%s", state, children, out.String())
	}
	cmd.Process.Kill()
	cmd.Wait()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline) && len(processesNaming(state)) > 0; {
		time.Sleep(20 * time.Millisecond)
	}
	for _, pid := range processesNaming(state) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("child %d outlived up killed by SIGKILL", pid)
	}
	assertUnlocked(t, state)
	assertUnlocked(t, filepath.Join(state, "server"))
}

// TestRefusedStartLeavesNoState starts the server and the shuffler with a
// --listen they cannot bind (malformed, and a port in use), the server with
// a data set it cannot load and the shuffler with a server that does not
// answer, and checks that each is refused with an
// error naming the cause and leaves no state directory (and no metrics
// file) behind.
func TestRefusedStartLeavesNoState(t *testing.T) {
	dir := t.TempDir()
	pkiDir := filepath.Join(dir, "pki")
	if out, err := runCmd(t, "pki", "init", "--dir", pkiDir); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	run := []string{"--dataset", "synthetic", "--model", "logreg", "--clients", "20", "--sample", "5", "--eps0", "2", "--no-progress"}
	cases := []struct {
		name string
		cmd  string
		args []string
		want string
	}{
		{"server bad listen", "server", []string{"--listen", "nonsense"}, "listen nonsense"},
		{"server port in use", "server", []string{"--listen", busy.Addr().String()}, "address already in use"},
		{"server missing data", "server", []string{"--listen", "127.0.0.1:0", "--dataset", "mnist", "--data-dir", filepath.Join(dir, "none")}, "none"},
		{"shuffler bad listen", "shuffler", []string{"--listen", "nonsense", "--server", "127.0.0.1:1"}, "listen nonsense"},
		{"shuffler port in use", "shuffler", []string{"--listen", busy.Addr().String(), "--server", "127.0.0.1:1"}, "address already in use"},
		{"shuffler server unreachable", "shuffler", []string{"--listen", "127.0.0.1:0", "--server", closedPort(t), "--connect-timeout", "300ms"}, "did not answer within"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			state := filepath.Join(dir, "state"+strconv.Itoa(i))
			metrics := filepath.Join(dir, "metrics"+strconv.Itoa(i)+".jsonl")
			args := []string{"--state", state, "--pki", filepath.Join(pkiDir, c.cmd)}
			if c.cmd == "server" {
				args = append(append(args, run...), "--metrics", metrics)
			}
			out, err := runCmd(t, c.cmd, append(args, c.args...)...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("%s %v: %v, want an error naming %q\n%s", c.cmd, c.args, err, c.want, out)
			}
			for _, p := range []string{state, metrics} {
				if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("refused start left %s behind (%v)", p, err)
				}
			}
		})
	}
}

// TestClientLifecycle starts a server and a shuffler by hand and checks
// how client processes end: a client whose credentials the shuffler
// refuses exits 1 without ever logging "registered"; a client given a
// wrong --server address exits 1 within its --connect-timeout, naming the
// address; a client whose shuffler stops mid-run (SIGINT) exits 1 after
// its --connect-timeout, saying the shuffler went away before the run
// finished (it used to exit 0, "shuffler finished the run").
func TestClientLifecycle(t *testing.T) {
	dir := t.TempDir()
	pkiDir, otherPKI := filepath.Join(dir, "pki"), filepath.Join(dir, "other")
	creds, forged := filepath.Join(dir, "creds.json"), filepath.Join(dir, "forged.json")
	for _, args := range [][]string{
		{"init", "--dir", pkiDir}, {"enrol", "--dir", pkiDir, "--clients", "0:20", "--out", creds},
		{"init", "--dir", otherPKI}, {"enrol", "--dir", otherPKI, "--clients", "0:20", "--out", forged},
	} {
		if out, err := runCmd(t, "pki", args...); err != nil {
			t.Fatalf("pki %v: %v\n%s", args, err, out)
		}
	}
	srv := startNetProc(t, "server", nil, "server", "--listen", "127.0.0.1:0", "--addr-file", filepath.Join(dir, "srv.addr"),
		"--state", filepath.Join(dir, "server"), "--pki", filepath.Join(pkiDir, "server"), "--dataset", "synthetic", "--model", "logreg", "--clients", "20",
		"--sample", "5", "--eps0", "2", "--epochs", "1000", "--eval-every", "1000", "--test-size", "50", "--no-progress")
	srvAddr := waitFile(t, filepath.Join(dir, "srv.addr"), srv.cmd, srv.out.b)
	sh := startNetProc(t, "shuffler", nil, "shuffler", "--listen", "127.0.0.1:0", "--addr-file", filepath.Join(dir, "sh.addr"),
		"--server", srvAddr, "--state", filepath.Join(dir, "shuffler"), "--pki", filepath.Join(pkiDir, "shuffler"), "--release-when-complete")
	shAddr := waitFile(t, filepath.Join(dir, "sh.addr"), sh.cmd, sh.out.b)
	client := func(server, credFile string) *exec.Cmd {
		return child(nil, "client", "--shuffler", shAddr, "--server", server, "--clients", "0:20", "--connect-timeout", "3s",
			"--pki", filepath.Join(pkiDir, "client"), "--credentials", credFile)
	}

	out, code, took := runTimed(t, client(srvAddr, forged), time.Minute)
	if code != 1 || !strings.Contains(out, "refused the registration of clients 0:20") || strings.Contains(out, "registered") {
		t.Fatalf("client with forged credentials: exit %d after %v, want 1, refused, never \"registered\":\n%s", code, took, out)
	}
	wrong := closedPort(t)
	// Its --connect-timeout is 3 s (the default a minute): the wait it
	// reports, measured by the client itself, must be the flag's, which the
	// test's own clock on a busy machine could not tell.
	out, code, took = runTimed(t, client(wrong, creds), 2*time.Minute)
	if code != 1 || !strings.Contains(out, "the server at "+wrong+" did not answer within") {
		t.Fatalf("client with a wrong --server: exit %d after %v, want 1 naming %s:\n%s", code, took, wrong, out)
	}
	if w := reportedWait(t, out); w < 3*time.Second || w >= node.DefaultConnectTimeout {
		t.Fatalf("client with a wrong --server waited %v, want its --connect-timeout 3s:\n%s", w, out)
	}

	cl := startNetProc(t, "client", nil, client(srvAddr, creds).Args[1:]...)
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) && !strings.Contains(sh.out.String(), "round 2 released") {
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(cl.out.String(), "clients 0:20 registered") || !strings.Contains(sh.out.String(), "round 2 released") {
		t.Fatalf("client never registered:\n%s\nshuffler:\n%s", cl.out, sh.out)
	}
	sh.stop(10 * time.Second)
	select {
	case <-cl.done:
	case <-time.After(40 * time.Second): // its --connect-timeout is 3 s, the default 60
		t.Fatalf("client still running 40s after its shuffler stopped:\n%s", cl.out)
	}
	var ee *exec.ExitError
	if !errors.As(cl.err, &ee) || ee.ExitCode() != 1 || !strings.Contains(cl.out.String(), "the shuffler went away before the run finished") ||
		strings.Contains(cl.out.String(), "finished the run") {
		t.Fatalf("client whose shuffler stopped mid-run: %v, want exit 1, \"went away before the run finished\":\n%s\nshuffler:\n%s", cl.err, cl.out, sh.out)
	}
	srv.stop(10 * time.Second)
}

// reportedWait is the wait a role's "did not answer within D" error names.
func reportedWait(t *testing.T, out string) time.Duration {
	t.Helper()
	_, rest, ok := strings.Cut(out, "did not answer within ")
	d, err := time.ParseDuration(strings.Fields(rest + " x")[0])
	if !ok || err != nil {
		t.Fatalf("no \"did not answer within DURATION\" in:\n%s", out)
	}
	return d
}

// closedPort is a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	return addr
}

// TestServerLossEndsTheRun kills the server (SIGKILL) in the middle of a
// run started by hand and checks that nothing waits forever: the shuffler
// exits 1 within its --connect-timeout, naming the server's address and
// saying it went away before the run finished, and its clients then exit
// 1 as well (their shuffler went away).
func TestServerLossEndsTheRun(t *testing.T) {
	dir := t.TempDir()
	pkiDir, creds := filepath.Join(dir, "pki"), filepath.Join(dir, "creds.json")
	for _, args := range [][]string{{"init", "--dir", pkiDir}, {"enrol", "--dir", pkiDir, "--clients", "0:20", "--out", creds}} {
		if out, err := runCmd(t, "pki", args...); err != nil {
			t.Fatalf("pki %v: %v\n%s", args, err, out)
		}
	}
	srv := startNetProc(t, "server", nil, "server", "--listen", "127.0.0.1:0", "--addr-file", filepath.Join(dir, "srv.addr"),
		"--state", filepath.Join(dir, "server"), "--pki", filepath.Join(pkiDir, "server"), "--dataset", "synthetic", "--model", "logreg",
		"--clients", "20", "--sample", "5", "--eps0", "2", "--epochs", "1000", "--eval-every", "1000", "--test-size", "50", "--no-progress")
	srvAddr := waitFile(t, filepath.Join(dir, "srv.addr"), srv.cmd, srv.out.b)
	sh := startNetProc(t, "shuffler", nil, "shuffler", "--listen", "127.0.0.1:0", "--addr-file", filepath.Join(dir, "sh.addr"),
		"--server", srvAddr, "--state", filepath.Join(dir, "shuffler"), "--pki", filepath.Join(pkiDir, "shuffler"), "--connect-timeout", "3s",
		"--release-when-complete")
	shAddr := waitFile(t, filepath.Join(dir, "sh.addr"), sh.cmd, sh.out.b)
	cl := startNetProc(t, "client", nil, "client", "--shuffler", shAddr, "--server", srvAddr, "--clients", "0:20",
		"--connect-timeout", "3s", "--pki", filepath.Join(pkiDir, "client"), "--credentials", creds)
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline) && !strings.Contains(sh.out.String(), "round 2 released"); {
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(sh.out.String(), "round 2 released") {
		t.Fatalf("no round released within 2 minutes\nshuffler:\n%s\nclient:\n%s\nserver:\n%s", sh.out, cl.out, srv.out)
	}
	srv.cmd.Process.Kill()
	<-srv.done
	for _, p := range []*netProc{sh, cl} {
		select {
		case <-p.done:
		case <-time.After(40 * time.Second): // their --connect-timeout is 3 s, the default 60
			t.Fatalf("%s still running 40s after the server was killed:\n%s", p.name, p.out)
		}
		var ee *exec.ExitError
		if !errors.As(p.err, &ee) || ee.ExitCode() != 1 || !strings.Contains(p.out.String(), "went away before the run finished") {
			t.Fatalf("%s after the server was killed: %v, want exit 1, \"went away before the run finished\":\n%s", p.name, p.err, p.out)
		}
	}
	if !strings.Contains(sh.out.String(), "the server at "+srvAddr) {
		t.Fatalf("the shuffler's error does not name the server at %s:\n%s", srvAddr, sh.out)
	}
}
