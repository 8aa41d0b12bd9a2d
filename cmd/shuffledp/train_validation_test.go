package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// --validation evaluates on a split held out of the training set and says
// so in every record; the test set's accuracy never appears.
func TestTrainValidationSplit(t *testing.T) {
	dir := t.TempDir()
	mpath := filepath.Join(dir, "m.jsonl")
	args := append(append([]string{}, small...), "--epochs", "1", "--validation", "50", "--metrics", mpath)
	out, err := runTrainCmd(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "validation accuracy") {
		t.Errorf("summary line does not name the validation split: %q", out)
	}
	recs := readRecords(t, mpath)
	if len(recs) < 2 {
		t.Fatalf("%d records", len(recs))
	}
	for _, r := range recs {
		if r["eval_set"] != "validation" {
			t.Fatalf("record without eval_set validation: %v", r)
		}
		if _, ok := r["test_accuracy"].(float64); !ok {
			t.Fatalf("no accuracy on the validation split: %v", r)
		}
	}
	// Without the flag the field is absent (the test set).
	mpath2 := filepath.Join(dir, "m2.jsonl")
	args = append(append([]string{}, small...), "--epochs", "1", "--metrics", mpath2)
	if _, err := runTrainCmd(t, args...); err != nil {
		t.Fatal(err)
	}
	for _, r := range readRecords(t, mpath2) {
		if _, ok := r["eval_set"]; ok {
			t.Fatalf("eval_set present without --validation: %v", r)
		}
	}
	for _, bad := range []string{"-1"} {
		_, err := runTrainCmd(t, append(append([]string{}, small...), "--validation", bad)...)
		if err == nil || !strings.Contains(err.Error(), "validation") {
			t.Errorf("--validation %s: error %v, want one naming validation", bad, err)
		}
	}
}
