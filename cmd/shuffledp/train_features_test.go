package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTrainFeatures: --features scatter trains logistic regression on the
// 324 scattering features (the start line names 3,250 parameters), caches
// the features under DATA-DIR/features, and a bad spec is refused naming
// features before any data is read.
func TestTrainFeatures(t *testing.T) {
	dir := t.TempDir()
	args := []string{"--dataset", "synthetic", "--data-dir", dir, "--model", "logreg", "--clients", "30", "--sample", "10",
		"--randomizer", "rinf", "--linf-clip", "clamp", "--clip", "0.01", "--eps0", "2", "--lr", "1", "--no-progress",
		"--test-size", "10", "--epochs", "1", "--features", "scatter"}
	out, err := runTrainCmd(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "3250 params") {
		t.Errorf("start line does not name 3250 parameters: %q", out)
	}
	cached, _ := filepath.Glob(filepath.Join(dir, "features", "*.f64"))
	if len(cached) != 2 { // the 30 training and the 10 test examples
		t.Errorf("cache holds %v, want two files", cached)
	}
	if _, err := os.Stat(filepath.Join(dir, "features")); err != nil {
		t.Fatal(err)
	}
	bad := append(append([]string{}, args[:len(args)-1]...), "scatter:pool=3")
	if _, err := runTrainCmd(t, bad...); err == nil || !strings.Contains(err.Error(), "pool") {
		t.Errorf("--features scatter:pool=3: error %v, want one naming pool", err)
	}
}
