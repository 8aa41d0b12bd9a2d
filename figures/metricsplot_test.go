package figures

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMetricsPlotBuild checks the labels of the series (given, from the
// run's parameters, from the file name), the references, and that bad
// options are refused before any file is read.
func TestMetricsPlotBuild(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "run.jsonl")
	bare := filepath.Join(dir, "bare.jsonl")
	os.WriteFile(run, []byte(`{"round":1,"test_accuracy":0.5,"epsilon":1,"randomizer":"rinf","eps0":2,"sample":20,"clip":0.1}`+"\n"), 0o644)
	os.WriteFile(bare, []byte(`{"round":1,"test_accuracy":0.5,"epsilon":1}`+"\n"), 0o644)
	a, err := MetricsPlot{Files: []string{run, bare}, References: []string{ReferenceNames()[0]}}.Build()
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Series) != 2 || a.Series[0].Label != "rinf, eps0=2, k=20, C=0.1" || a.Series[1].Label != "bare.jsonl" || len(a.References) == 0 {
		t.Fatalf("got %+v", a)
	}
	if a, err = (MetricsPlot{Files: []string{run}, Labels: []string{"mine"}}).Build(); err != nil || a.Series[0].Label != "mine" {
		t.Fatalf("label: %+v, %v", a, err)
	}
	missing := filepath.Join(dir, "missing.jsonl") // never read: the checks come first
	for _, tc := range []struct {
		m    MetricsPlot
		want string
	}{
		{MetricsPlot{Files: []string{missing}, Labels: []string{"a", "b"}}, "one --label per --metrics file"},
		{MetricsPlot{Files: []string{missing}, MaxX: -1}, "--max-epsilon"},
		{MetricsPlot{Files: []string{missing}, References: []string{"nope"}}, "reference must be one of"},
		{MetricsPlot{Files: []string{missing}}, "missing.jsonl"},
		{MetricsPlot{Files: []string{run}, ApproxDP: 2}, "check-in Gaussian"},
	} {
		if _, err := tc.m.Build(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.m, err, tc.want)
		}
	}
}
