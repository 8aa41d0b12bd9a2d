package e2e

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestBadValuesRefusedBeforeState: every bad value of up's, server's and
// train's flags is refused naming the flag, before the state directory
// (or anything else) is created, so that the corrected command finds
// nothing of the refused one. Each case failed before: up created --state
// before a child refused --dropout 1.5, took --dropout NaN or -0.5 for no
// dropout and --round-timeout -1s for the shuffler's 2 minutes; server
// planned 4.6e16 rounds for --clients 9223372036854775807; train --dataset
// mnist without --data-dir left --state behind with its flags recorded.
func TestBadValuesRefusedBeforeState(t *testing.T) {
	dir := t.TempDir()
	run := []string{"--dataset", "synthetic", "--model", "logreg", "--clients", "20", "--sample", "5", "--eps0", "2", "--no-progress"}
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		cmd    string
		args   []string
		want   string
		noBase bool // args replace run
	}{
		{"up dropout 1.5", "up", []string{"--dropout", "1.5"}, "dropout must be in [0, 1]", false},
		{"up dropout NaN", "up", []string{"--dropout", "NaN"}, "dropout must be in [0, 1]", false},
		{"up dropout negative", "up", []string{"--dropout", "-0.5"}, "dropout must be in [0, 1]", false},
		{"up round-timeout negative", "up", []string{"--round-timeout", "-1s"}, "round-timeout must be >= 0", false},
		{"up min-connected above clients", "up", []string{"--min-connected", "21"}, "min-connected must be in [0, clients=20]", false},
		{"up client-processes 0", "up", []string{"--client-processes", "0"}, "client-processes must be >= 1", false},
		{"up clients huge", "up", []string{"--clients", "9223372036854775807"}, "clients must be in [1, 2147483647]", false},
		{"server clients huge", "server", []string{"--clients", "9223372036854775807", "--pki", filepath.Join(dir, "nopki")}, "clients must be in [1, 2147483647]", false},
		{"server rounds huge", "server", []string{"--epochs", "1e12", "--pki", filepath.Join(dir, "nopki")}, "epochs: 1e+12 epochs of 20 clients, 5 a round, plan 4e+12 rounds", false},
		{"train mnist without data-dir", "train", []string{"--dataset", "mnist", "--model", "logreg", "--clients", "20", "--sample", "5", "--no-progress"}, "data-dir is required for --dataset mnist", true},
		{"train mnist data-dir not a directory", "train", []string{"--dataset", "mnist", "--data-dir", filepath.Join(dir, "none"), "--model", "logreg", "--clients", "20", "--sample", "5", "--no-progress"}, "data-dir " + filepath.Join(dir, "none") + ": not a directory", true},
		{"train mnist data-dir without mnist", "train", []string{"--dataset", "mnist", "--data-dir", empty, "--model", "logreg", "--clients", "20", "--sample", "5", "--no-progress"}, empty, true},
	}
	// Should a bad value of up's pass (the defect), the run it starts is
	// short: the case fails at once, saying it was not refused.
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if strings.HasPrefix(c.name, "up") {
				c.args = append(c.args, "--epochs", "0.25", "--release-when-complete", "--test-size", "20")
			}
			state := filepath.Join(dir, "runs"+strconv.Itoa(i), "x")
			if c.cmd != "up" {
				state = filepath.Join(dir, "x"+strconv.Itoa(i)) // train and server need the parent
			}
			args := append([]string{"--state", state}, c.args...)
			if !c.noBase {
				args = append(append([]string{}, run...), args...)
			}
			out, err := runCmd(t, c.cmd, args...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("%v: %v; want an error saying %q\n%s", args, err, c.want, out)
			}
			for _, p := range []string{state, filepath.Dir(state)} {
				if p == dir {
					continue
				}
				if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("the refused command left %s behind (%v)", p, err)
				}
			}
		})
	}
	// The corrected command runs in the state directory the refused one
	// named.
	state := filepath.Join(dir, "x"+strconv.Itoa(len(cases)-1))
	if out, err := runCmd(t, "train", "--dataset", "synthetic", "--model", "logreg", "--clients", "20", "--sample", "5",
		"--epochs", "0.25", "--test-size", "20", "--no-progress", "--state", state); err != nil {
		t.Fatalf("the corrected command: %v\n%s", err, out)
	}
}
