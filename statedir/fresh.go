package statedir

import (
	"errors"
	"os"
)

// FreshPaths are the paths of a start that did not exist before it: a
// refused start removes them (Remove), so that it leaves no state behind.
type FreshPaths []string

// NewFreshPaths returns those of paths ("" skipped) that do not exist now.
func NewFreshPaths(paths ...string) FreshPaths {
	var out FreshPaths
	for _, p := range paths {
		if p == "" {
			continue
		}
		if _, err := os.Lstat(p); errors.Is(err, os.ErrNotExist) {
			out = append(out, p)
		}
	}
	return out
}

// Remove removes the fresh paths (what the refused start created there).
func (fp FreshPaths) Remove() {
	for _, p := range fp {
		os.RemoveAll(p)
	}
}
