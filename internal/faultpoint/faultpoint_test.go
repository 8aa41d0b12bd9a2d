package faultpoint

import (
	"errors"
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
