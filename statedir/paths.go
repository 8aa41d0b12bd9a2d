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

// CheckOutputFiles is CheckOutputFile for several outputs, given as flag,
// path pairs (an empty path is not requested and not checked), which must
// moreover be distinct files. Nothing is created or modified.
func CheckOutputFiles(flagPaths ...string) error {
	seen := map[string]string{}
	for i := 0; i+1 < len(flagPaths); i += 2 {
		flag, path := flagPaths[i], flagPaths[i+1]
		if path == "" {
			continue
		}
		if err := CheckOutputFile(flag, path); err != nil {
			return err
		}
		abs, err := filepath.Abs(path)
		if err != nil {
			continue
		}
		if other, ok := seen[abs]; ok {
			return fmt.Errorf("--%s %s is the --%s file; give it its own file", flag, path, other)
		}
		seen[abs] = flag
	}
	return nil
}
