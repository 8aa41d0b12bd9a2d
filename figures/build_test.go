package figures

import (
	"strings"
	"testing"
)

// TestBuildRefusesFirst: the point count and an unknown name are refused
// before anything is computed (a built figure costs seconds; its image and
// CSV are checked by cmd/shuffledp's figure tests, which call Build).
func TestBuildRefusesFirst(t *testing.T) {
	name := List()[0].Name
	for _, p := range []int{1, MaxPoints + 1} {
		if _, err := Build(name, p, "svg", false); err == nil || !strings.Contains(err.Error(), "--points") {
			t.Errorf("Build at %d points: %v", p, err)
		}
		if err := CheckPoints(p); err == nil {
			t.Errorf("CheckPoints(%d) accepted", p)
		}
	}
	for _, p := range []int{2, MaxPoints} {
		if err := CheckPoints(p); err != nil {
			t.Errorf("CheckPoints(%d): %v", p, err)
		}
	}
	if _, err := Build("no-such-figure", 2, "svg", false); err == nil {
		t.Error("an unknown figure was built")
	}
}
