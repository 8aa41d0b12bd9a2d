package main

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
)

// tinyUpRun is the smallest networked run: 20 clients, 5 a round, one
// epoch (4 rounds) of logistic regression on synthetic data.
var tinyUpRun = []string{"up", "--dataset", "synthetic", "--model", "logreg", "--clients", "20", "--sample", "5",
	"--eps0", "2", "--epochs", "1", "--eval-every", "4", "--test-size", "50", "--no-progress"}

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
	out, code, took = runTimed(t, child(nil, args...), 20*time.Second)
	if code != 0 || !strings.Contains(out, "already finished: 4 of 4 rounds done") || !strings.Contains(out, "up: run finished") {
		t.Fatalf("rerun of a finished run: exit %d after %v, want 0 with \"already finished\"\n%s", code, took, out)
	}
	if took > 10*time.Second {
		t.Fatalf("rerun of a finished run took %v\n%s", took, out)
	}
	assertUnlocked(t, state)
	assertUnlocked(t, filepath.Join(state, "server"))
}

// assertUnlocked checks that no process holds the state directory's lock
// (within a few seconds: the kernel releases a killed process's locks as
// it exits).
func assertUnlocked(t *testing.T, dir string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
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
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline) && len(processesNaming(state)) > 0; {
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
// --listen they cannot bind (malformed, and a port in use) and the server
// with a data set it cannot load, and checks that each is refused with an
// error naming the cause and leaves no state directory (and no metrics
// file) behind.
func TestRefusedStartLeavesNoState(t *testing.T) {
	dir := t.TempDir()
	pkiDir := filepath.Join(dir, "pki")
	if out, err := runCmd(t, newPKICmd, "init", "--dir", pkiDir); err != nil {
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
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			state := filepath.Join(dir, "state"+strconv.Itoa(i))
			metrics := filepath.Join(dir, "metrics"+strconv.Itoa(i)+".jsonl")
			args := []string{"--state", state, "--pki", pkiDir}
			newCmd := newShufflerCmd
			if c.cmd == "server" {
				newCmd = newServerCmd
				args = append(append(args, run...), "--metrics", metrics)
			}
			out, err := runCmd(t, newCmd, append(args, c.args...)...)
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
