package statedir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/shuffledp/shuffledp/internal/faultpoint"
)

// PointBeforeRename is the crash-test point (internal/faultpoint) inside
// WriteFileAtomic, after the temporary file is durable and before it
// replaces the target.
const PointBeforeRename = "statedir.before-rename"

// tempMarker is part of every temporary file name WriteFileAtomic uses, so
// that Open can recognise and remove the leftovers of an interrupted write.
const tempMarker = ".tmp-"

// tempHook, nil outside tests, is called with "created" after a temporary
// file is created and before it is locked, and with "locked" once it is
// locked and written, before the rename: the two instants at which another
// process's Open may run removeTemps.
var tempHook func(step string)

// WriteFileAtomic replaces the file at path with data so that, whatever
// instant the process dies at, the file holds either its old or its new
// contents in full: data goes to a temporary file in the same directory,
// which is fsynced, renamed over path, and the directory is fsynced so the
// rename itself is durable. On error the temporary file is removed.
//
// The writer holds an exclusive flock on its temporary file from just after
// creating it until after the rename, so that a process opening the same
// directory as its state (Open, which removes interrupted writes'
// temporaries) can tell a live writer's file, which it leaves, from a dead
// one's, whose lock died with it: `up` runs its nodes with address files in
// the directory the shuffler opens as its --state, and without the lock the
// shuffler's cleanup deleted the server's address file before its rename.
func WriteFileAtomic(path string, data []byte) error {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := createLockedTemp(dir, base+tempMarker+"*")
	if err != nil {
		return err
	}
	ok := false
	defer func() {
		if !ok {
			os.Remove(tmp.Name()) // while still locked: no cleanup races it
		}
		tmp.Close() // releases the lock
	}()
	if _, err := tmp.Write(data); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if tempHook != nil {
		tempHook("locked")
	}
	faultpoint.Hit(PointBeforeRename)
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	ok = true
	return SyncDir(dir)
}

// createLockedTemp creates a temporary file in dir and takes its exclusive
// flock. A cleanup may remove the file between its creation and the lock
// (removeTemps takes the lock of an unlocked temporary, then unlinks it):
// the name then no longer leads to the locked file, and a new one is made.
func createLockedTemp(dir, pattern string) (*os.File, error) {
	for range 100 {
		f, err := os.CreateTemp(dir, pattern)
		if err != nil {
			return nil, err
		}
		if tempHook != nil {
			tempHook("created")
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
			f.Close()
			os.Remove(f.Name())
			return nil, fmt.Errorf("lock %s: %w", f.Name(), err)
		}
		if named(f, f.Name()) {
			return f, nil
		}
		f.Close() // removed by a cleanup before we locked it: try again
	}
	return nil, fmt.Errorf("%s: every temporary file was removed before it could be locked", dir)
}

// named reports whether path still names the open file f.
func named(f *os.File, path string) bool {
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	pi, err := os.Lstat(path)
	return err == nil && os.SameFile(fi, pi)
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
// calls in dir. The caller holds the directory's lock, so none of its own
// writes is in flight, but other processes may write files into the same
// directory (the address files of `up`'s nodes): a temporary whose flock is
// held belongs to a live writer and is left; one whose lock can be taken
// was abandoned (a lock dies with its process) and is removed while the
// lock is held, so that its writer, had it only just created it, sees the
// name gone once it gets the lock and starts again (createLockedTemp).
func removeTemps(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if !e.Type().IsRegular() || !strings.Contains(e.Name(), tempMarker) {
			continue
		}
		if err := removeIfAbandoned(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// removeIfAbandoned removes the temporary file at path unless a writer
// holds its lock.
func removeIfAbandoned(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil // renamed or removed by its writer meanwhile
	}
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); errors.Is(err, unix.EWOULDBLOCK) {
		return nil // a live writer's
	} else if err != nil {
		return fmt.Errorf("lock %s: %w", path, err)
	}
	if !named(f, path) {
		return nil // renamed by its writer between our open and our lock
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}
