package training

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shuffledp/shuffledp/metrics"
)

// TestOpenLocalMetricsFile: a run without a state directory appends every
// evaluation to its fresh metrics file, one line each, before the hook
// hears it; an existing non-empty metrics file is refused before any data
// is loaded, and so is a run whose state directory's parent is missing.
func TestOpenLocalMetricsFile(t *testing.T) {
	o := smallOptions()
	cfg, err := o.Config(func(string) bool { return false }, []string{"shuffledp", "train"})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "m.jsonl")
	run, err := OpenLocal(context.Background(), LocalConfig{Options: o, Config: cfg, Metrics: path})
	if err != nil {
		t.Fatal(err)
	}
	evals := 0
	if _, err := run.Run(context.Background(), Hooks{OnEval: func(metrics.Record) error {
		b, _ := os.ReadFile(path)
		if n := strings.Count(string(b), "\n"); n != evals+1 {
			t.Errorf("evaluation %d: the metrics file has %d lines before the hook", evals+1, n)
		}
		evals++
		return nil
	}}); err != nil {
		t.Fatal(err)
	}
	if err := run.Close(); err != nil {
		t.Fatal(err)
	}
	if evals == 0 {
		t.Fatal("no evaluation")
	}
	if _, err := OpenLocal(context.Background(), LocalConfig{Options: o, Config: cfg, Metrics: path}); err == nil || !strings.Contains(err.Error(), "--metrics") {
		t.Errorf("an existing metrics file: %v, want a refusal naming --metrics", err)
	}
	missing := filepath.Join(t.TempDir(), "no", "state")
	if _, err := OpenLocal(context.Background(), LocalConfig{Options: o, Config: cfg, State: missing, Flags: map[string]string{}}); err == nil {
		t.Error("a state directory whose parent is missing was accepted")
	}
}
