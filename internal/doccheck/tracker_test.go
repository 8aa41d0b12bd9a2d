package doccheck

import (
	"strings"
	"testing"
)

// TestNoTrackerNumbers: no file of the repository cites the issue tracker by
// number; code, comments and docs say what the thing is.
func TestNoTrackerNumbers(t *testing.T) {
	probs, err := TrackerReferences(repoRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range probs {
		t.Error(p)
	}
}

// TestTrackerPattern is the negative control: each form is caught, and the
// words alone, other numbers and other projects' issue links are not.
func TestTrackerPattern(t *testing.T) {
	is := "iss" + "ue" // kept apart so that this file does not cite the tracker itself
	caught := []string{
		"// see " + is + " 14 for the protocol",
		"(" + is + " 10, it" + "em 3)",
		"## Networked deployment (" + strings.ToUpper(is[:1]) + is[1:] + " 14)",
		is + "s 10 and 11",
		is + " #3",
		"the defects of " + is + "10",
		"(it" + "em 5)",
		"the " + is + "-2 contract",
	}
	for _, line := range caught {
		if len(trackerLines("f", line)) != 1 {
			t.Errorf("not caught: %q", line)
		}
	}
	passed := []string{
		"a known " + is + " with the order grid",
		"https://github.com/apple/ml-shuffling-amplification/" + is + "s/12",
		"the series then stop 10–150 terms past the order",
		"each it" + "em of the batch",
		"tissue 3", // a word that only ends in it
	}
	for _, line := range passed {
		if p := trackerLines("f", line); len(p) != 0 {
			t.Errorf("wrongly caught: %q: %v", line, p)
		}
	}
}
