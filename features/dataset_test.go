package features

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/shuffledp/shuffledp/data"
)

// TestCachedIsDataset: the cache's second read returns the features bit for
// bit as computed, the result does not depend on the number of workers, a
// different parameter or a different pixel gives a different key, and a
// truncated cache file is an error, not a silently short data set.
func TestCachedIsDataset(t *testing.T) {
	ds := data.Synthetic(12, 7)
	s, err := Parse("scatter", 28, 28)
	if err != nil {
		t.Fatal(err)
	}
	want, err := s.Dataset(ds, 1)
	if err != nil {
		t.Fatal(err)
	}
	if want.Dim != 324 || want.N != 12 || want.Classes != ds.Classes {
		t.Fatalf("dim %d n %d classes %d; want 324, 12, %d", want.Dim, want.N, want.Classes, ds.Classes)
	}
	dir := t.TempDir()
	for pass := range 2 {
		got, err := s.Cached(ds, dir, 3)
		if err != nil {
			t.Fatal(err)
		}
		for i := range want.X {
			if math.Float64bits(got.X[i]) != math.Float64bits(want.X[i]) {
				t.Fatalf("pass %d: feature %d = %v, want %v", pass, i, got.X[i], want.X[i])
			}
		}
		for i := range want.Y {
			if got.Y[i] != want.Y[i] {
				t.Fatalf("pass %d: label %d = %d, want %d", pass, i, got.Y[i], want.Y[i])
			}
		}
	}
	path := filepath.Join(dir, s.Key(ds)+".f64")
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("no cache file: %v", err)
	}
	other, _ := Parse("scatter:pool=4", 28, 28)
	if other.Key(ds) == s.Key(ds) {
		t.Error("pool 2 and pool 4 share a cache key")
	}
	moved := *ds
	moved.X = append([]float64(nil), ds.X...)
	moved.X[5] += 1e-9
	if s.Key(&moved) == s.Key(ds) {
		t.Error("a changed pixel keeps the cache key")
	}
	if err := os.Truncate(path, 100); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Cached(ds, dir, 1); err == nil {
		t.Error("a truncated cache file was accepted")
	}
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		spec string
		dim  int
	}{{"", 0}, {"none", 0}, {"scatter", 324}, {"scatter:pool=1", 81}, {"scatter:pool=4,norm=unit", 1296}, {"scatter:j=1,l=4,pool=8,norm=unit", 5 * 8 * 8}, {"scatter:j=1,l=4,pool=16,groups=5", 5 * 16 * 16}} {
		s, err := Parse(tc.spec, 28, 28)
		if err != nil {
			t.Fatalf("%q: %v", tc.spec, err)
		}
		if (s == nil) != (tc.dim == 0) || (s != nil && s.Dim() != tc.dim) {
			t.Errorf("%q: extractor %v, want dim %d", tc.spec, s, tc.dim)
		}
	}
	for _, bad := range []string{"pca", "scatter:pool", "scatter:pool=x", "scatter:size=3", "scatter:pool=3", "scatter:norm=batch"} {
		if _, err := Parse(bad, 28, 28); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestDatasetRejectsShape: an extractor for 28x28 images refuses other
// shapes instead of reading past them.
func TestDatasetRejectsShape(t *testing.T) {
	s, _ := Parse("scatter", 28, 28)
	ds := &data.Dataset{X: make([]float64, 2*100), Y: []int{0, 1}, N: 2, Dim: 100, Rows: 10, Cols: 10, Channels: 1, Classes: 2}
	if _, err := s.Dataset(ds, 1); err == nil {
		t.Error("10x10 images accepted by a 28x28 extractor")
	}
}
