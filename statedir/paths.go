package statedir

import (
	"fmt"
	"os"
	"path/filepath"
)

// CheckOutputFile verifies, before any work is done, that path can be
// written as a file: its parent directory must exist (it is not created),
// and path must be absent or a writable regular file. Nothing is created
// or modified. flag names the option in the error ("metrics").
func CheckOutputFile(flag, path string) error {
	if path == "" {
		return fmt.Errorf("--%s: empty path", flag)
	}
	parent := filepath.Dir(path)
	st, err := os.Stat(parent)
	if err != nil || !st.IsDir() {
		return fmt.Errorf("--%s %s: directory %s does not exist", flag, path, parent)
	}
	if st, err := os.Stat(path); err == nil {
		if !st.Mode().IsRegular() {
			return fmt.Errorf("--%s %s: exists and is not a regular file", flag, path)
		}
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return fmt.Errorf("--%s %s: not writable: %w", flag, path, err)
		}
		return f.Close()
	}
	// Probe the directory with a temporary file (removed at once).
	f, err := os.CreateTemp(parent, ".shuffledp-probe-*")
	if err != nil {
		return fmt.Errorf("--%s %s: cannot create files in %s: %w", flag, path, parent, err)
	}
	f.Close()
	return os.Remove(f.Name())
}
