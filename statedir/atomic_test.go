package statedir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpenLeavesLiveWritersTemps reproduces, deterministically, the race
// `up` ran into: the server writes its address file into the directory the
// shuffler then opens as its --state, and the shuffler's Open removed the
// server's temporary between its creation and its rename ("addr-file:
// rename ...metrics-addr.tmp-...: no such file or directory"). Open runs at
// each of the writer's two vulnerable instants (created but not yet locked;
// locked and written, before the rename): the write must succeed either way,
// with the right contents and no temporary left over.
func TestOpenLeavesLiveWritersTemps(t *testing.T) {
	for _, step := range []string{"created", "locked"} {
		t.Run(step, func(t *testing.T) {
			state := filepath.Join(t.TempDir(), "run")
			d, err := Open(state, Options{})
			if err != nil {
				t.Fatal(err)
			}
			d.Close()
			target := filepath.Join(state, "server.metrics-addr")
			calls, opened := map[string]int{}, false
			tempHook = func(s string) {
				calls[s]++
				if s != step || opened {
					return
				}
				opened = true
				ents, _ := os.ReadDir(state)
				temps := 0
				for _, e := range ents {
					if strings.Contains(e.Name(), tempMarker) {
						temps++
					}
				}
				if temps != 1 {
					t.Errorf("at %s: %d temporaries in the directory, want the writer's one", s, temps)
				}
				d, err := Open(state, Options{}) // the other process
				if err != nil {
					t.Errorf("Open during the write: %v", err)
					return
				}
				d.Close()
			}
			defer func() { tempHook = nil }()
			if err := WriteFileAtomic(target, []byte("127.0.0.1:4242\n")); err != nil {
				t.Fatalf("write with Open at %q: %v", step, err)
			}
			if !opened {
				t.Fatalf("hook %q never ran (calls %v)", step, calls)
			}
			if b, _ := os.ReadFile(target); string(b) != "127.0.0.1:4242\n" {
				t.Fatalf("file holds %q", b)
			}
			// Removed before it was locked, the first temporary is
			// replaced by a second; locked, it survives and is the one.
			if want := map[string]int{"created": 2, "locked": 1}[step]; calls["created"] != want {
				t.Fatalf("%d temporaries created, want %d", calls["created"], want)
			}
			ents, _ := os.ReadDir(state)
			for _, e := range ents {
				if strings.Contains(e.Name(), tempMarker) {
					t.Fatalf("temporary %s left behind", e.Name())
				}
			}
		})
	}
}

// TestOpenRemovesTempOfClosedWriter: a temporary whose writer's lock is
// gone (the process died: its descriptors closed) is removed by Open, also
// when it was once locked.
func TestOpenRemovesTempOfClosedWriter(t *testing.T) {
	state := filepath.Join(t.TempDir(), "run")
	d, err := Open(state, Options{})
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	f, err := createLockedTemp(state, "x"+tempMarker+"*")
	if err != nil {
		t.Fatal(err)
	}
	if err := removeTemps(state); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(f.Name()); err != nil {
		t.Fatalf("a locked temporary was removed: %v", err)
	}
	f.Close() // the writer dies
	if d, err = Open(state, Options{}); err != nil {
		t.Fatal(err)
	}
	d.Close()
	if _, err := os.Stat(f.Name()); !os.IsNotExist(err) {
		t.Fatalf("abandoned temporary %s survived Open (%v)", f.Name(), err)
	}
}
