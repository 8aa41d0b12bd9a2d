package statedir

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/shuffledp/shuffledp/internal/faultpoint"
)

// PointBeforeRename is the crash-test point (internal/faultpoint) inside
// WriteFileAtomic, after the temporary file is durable and before it
// replaces the target.
const PointBeforeRename = "statedir.before-rename"

// tempMarker is part of every temporary file name WriteFileAtomic uses, so
// that Open can recognise and remove the leftovers of an interrupted write.
const tempMarker = ".tmp-"

// WriteFileAtomic replaces the file at path with data so that, whatever
// instant the process dies at, the file holds either its old or its new
// contents in full: data goes to a temporary file in the same directory,
// which is fsynced, renamed over path, and the directory is fsynced so the
// rename itself is durable. On error the temporary file is removed.
func WriteFileAtomic(path string, data []byte) error {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, base+tempMarker+"*")
	if err != nil {
		return err
	}
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	faultpoint.Hit(PointBeforeRename)
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	ok = true
	return SyncDir(dir)
}

// SyncDir fsyncs a directory, making renames and creations in it durable.
func SyncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// removeTemps deletes the temporary files of interrupted WriteFileAtomic
// calls in dir (the caller holds the directory's lock, so none is in use).
func removeTemps(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if e.Type().IsRegular() && strings.Contains(e.Name(), tempMarker) {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}
