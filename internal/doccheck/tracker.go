package doccheck

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// trackerRef matches a citation of the project's issue tracker: the word
// "issue" (or "issues"), then a number, with blanks, a hyphen or '#' between,
// or the word "item" then a number. Such numbers mean nothing to a reader of
// the repository. A link to another project's issue (".../issues/123") does
// not match.
var trackerRef = regexp.MustCompile(`(?i)\bissues?[\s-]*#?\s*[0-9]+|\bitem\s+[0-9]+\b`)

// TrackerReferences returns one message per line of the repository's files
// that cites a tracker number. The files are those git tracks under root (all
// files below root, but for directories starting with '.', where git is not
// available); binary files are skipped.
func TrackerReferences(root string) ([]string, error) {
	files, err := repoFiles(root)
	if err != nil {
		return nil, err
	}
	var probs []string
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			if os.IsNotExist(err) {
				continue // deleted in the working tree
			}
			return nil, err
		}
		if bytes.IndexByte(b[:min(len(b), 8000)], 0) >= 0 {
			continue
		}
		probs = append(probs, trackerLines(f, string(b))...)
	}
	return probs, nil
}

func trackerLines(file, text string) []string {
	var probs []string
	for i, line := range strings.Split(text, "\n") {
		if m := trackerRef.FindString(line); m != "" {
			probs = append(probs, fmt.Sprintf("%s:%d: cites the tracker (%q): say what the thing is instead", file, i+1, m))
		}
	}
	return probs
}

func repoFiles(root string) ([]string, error) {
	cmd := exec.Command("git", "ls-files", "-z")
	cmd.Dir = root
	if out, err := cmd.Output(); err == nil {
		var files []string
		for _, f := range strings.Split(string(out), "\x00") {
			if f != "" {
				files = append(files, f)
			}
		}
		return files, nil
	}
	var files []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err == nil {
			files = append(files, rel)
		}
		return err
	})
	return files, err
}
