package faultpoint

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"syscall"
	"testing"
)

// TestHitKills re-executes the test binary with a point armed at its third
// hit and checks the child died of SIGKILL after exactly two hits.
func TestHitKills(t *testing.T) {
	if os.Getenv("FAULTPOINT_CHILD") == "1" {
		for i := 1; i <= 5; i++ {
			os.Stdout.WriteString("hit\n")
			Hit("p")
			Hit("other")
		}
		os.Exit(0)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHitKills$")
	cmd.Env = append(os.Environ(), "FAULTPOINT_CHILD=1", EnvVar+"=p@3")
	out, err := cmd.Output()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("child exited normally (%v); output %q", err, out)
	}
	ws := ee.Sys().(syscall.WaitStatus)
	if !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child status %v, want killed by SIGKILL", ws)
	}
	if string(out) != "hit\nhit\nhit\n" {
		t.Fatalf("child printed %q, want three hits before dying at the third", out)
	}
}

func TestUnarmedIsNoop(t *testing.T) {
	for range 3 {
		Hit("p") // EnvVar unset in the parent test process
	}
}

// TestTraceWritesEveryHit: with a trace descriptor set, every hit of every
// point reaches the parent, in order, and the armed point still kills.
func TestTraceWritesEveryHit(t *testing.T) {
	if os.Getenv("FAULTPOINT_CHILD") == "1" {
		for range 3 {
			Hit("a")
			Hit("b")
		}
		os.Exit(0)
	}
	for _, tc := range []struct {
		arm, want string
		killed    bool
	}{
		{"", "a\nb\na\nb\na\nb\n", false},
		{"b@2", "a\nb\na\nb\n", true},
	} {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestTraceWritesEveryHit$")
		cmd.Env = append(os.Environ(), "FAULTPOINT_CHILD=1", EnvVar+"="+tc.arm, TraceEnvVar+"=3")
		cmd.ExtraFiles = []*os.File{w}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		w.Close()
		got, _ := io.ReadAll(r)
		r.Close()
		err = cmd.Wait()
		var ee *exec.ExitError
		killed := errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL
		if string(got) != tc.want || killed != tc.killed || (!killed && err != nil) {
			t.Errorf("armed %q: trace %q, exit %v; want trace %q, killed %v", tc.arm, got, err, tc.want, tc.killed)
		}
	}
}
