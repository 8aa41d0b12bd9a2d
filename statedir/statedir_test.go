package statedir

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func flags(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

func TestOpenCreatesLocksAndResumes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run")
	opts := Options{Flags: flags("eps0", "1.5", "workers", "2"), MayDiffer: []string{"workers"}}
	d, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !d.Created() || len(d.Manifest().Run) != 16 {
		t.Fatalf("new dir: created=%v run=%q", d.Created(), d.Manifest().Run)
	}
	// A second opener (a new open file description: flock conflicts even
	// within one process) is refused while the first holds the lock.
	if _, err := Open(path, opts); !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open while locked: got %v, want ErrLocked", err)
	} else if !strings.Contains(err.Error(), "pid") {
		t.Errorf("lock error does not name the owner: %v", err)
	}
	run := d.Manifest().Run
	d.Close()
	// Same flags (workers may differ): resumes the same run.
	opts.Flags["workers"] = "8"
	d2, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	if d2.Created() || d2.Manifest().Run != run {
		t.Fatalf("resume: created=%v run=%q, want run %q", d2.Created(), d2.Manifest().Run, run)
	}
	d2.Close()
}

func TestOpenRefusesDifferentFlags(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run")
	d, err := Open(path, Options{Flags: flags("eps0", "1.5", "dataset", "mnist")})
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	_, err = Open(path, Options{Flags: flags("eps0", "2", "dataset", "mnist")})
	if !errors.Is(err, ErrFlagMismatch) {
		t.Fatalf("got %v, want ErrFlagMismatch", err)
	}
	for _, want := range []string{"--eps0 was 1.5, now 2", "to resume", "new --state"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	// A flag present on one side only also differs.
	_, err = Open(path, Options{Flags: flags("eps0", "1.5")})
	if err == nil || !strings.Contains(err.Error(), "--dataset was mnist, now (unset)") {
		t.Fatalf("missing flag: got %v", err)
	}
}

func TestOpenPathErrors(t *testing.T) {
	tmp := t.TempDir()
	file := filepath.Join(tmp, "file")
	os.WriteFile(file, []byte("x"), 0o644)
	for _, tc := range []struct{ path, want string }{
		{"", "empty path"},
		{filepath.Join(tmp, "missing", "run"), "does not exist"},
		{file, "not a directory"},
	} {
		if _, err := Open(tc.path, Options{Flag: "state"}); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "--state") {
			t.Errorf("Open(%q): got %v, want an error naming --state and saying %q", tc.path, err, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(tmp, "missing")); !os.IsNotExist(err) {
		t.Error("Open created a missing parent directory")
	}
}

func TestOpenRemovesStaleTemps(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run")
	d, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	stale := d.File(CheckpointFile + tempMarker + "123")
	os.WriteFile(stale, []byte("half"), 0o644)
	d.Close()
	d, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Fatalf("stale temporary %s survived Open", stale)
	}
}

func TestWriteFileAtomic(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	for _, s := range []string{"one", "two, longer"} {
		if err := WriteFileAtomic(path, []byte(s)); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(path); string(b) != s {
			t.Fatalf("got %q, want %q", b, s)
		}
	}
	ents, _ := os.ReadDir(filepath.Dir(path))
	if len(ents) != 1 {
		t.Fatalf("temporaries left behind: %v", ents)
	}
	if err := WriteFileAtomic(filepath.Join(path, "x"), nil); err == nil {
		t.Fatal("write under a file succeeded")
	}
}

func TestCheckOutputFile(t *testing.T) {
	tmp := t.TempDir()
	ro := filepath.Join(tmp, "ro")
	os.Mkdir(ro, 0o555)
	existing := filepath.Join(tmp, "m.jsonl")
	os.WriteFile(existing, []byte("keep\n"), 0o644)
	for _, tc := range []struct {
		path string
		ok   bool
		want string
	}{
		{filepath.Join(tmp, "new.jsonl"), true, ""},
		{existing, true, ""},
		{filepath.Join(tmp, "nodir", "m.jsonl"), false, "does not exist"},
		{tmp, false, "not a regular file"},
		{"", false, "empty path"},
	} {
		err := CheckOutputFile("metrics", tc.path)
		if tc.ok != (err == nil) || (err != nil && (!strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "--metrics"))) {
			t.Errorf("CheckOutputFile(%q) = %v", tc.path, err)
		}
	}
	if os.Geteuid() != 0 { // root writes anywhere
		if err := CheckOutputFile("metrics", filepath.Join(ro, "m.jsonl")); err == nil {
			t.Error("read-only directory accepted")
		}
	}
	if b, _ := os.ReadFile(existing); string(b) != "keep\n" {
		t.Error("CheckOutputFile modified an existing file")
	}
	ents, _ := os.ReadDir(tmp)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".shuffledp-probe") || e.Name() == "new.jsonl" {
			t.Errorf("CheckOutputFile left %s behind", e.Name())
		}
	}
}

func TestMetricsLogRepairAndDedup(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.jsonl")
	os.WriteFile(path, []byte("{\"round\":0}\n{\"round\":5}\n{\"round\":10,\"acc"), 0o644)
	m, err := OpenMetricsLog(path, false)
	if err != nil {
		t.Fatal(err)
	}
	if m.LastRound() != 5 {
		t.Fatalf("LastRound = %d, want 5 (partial line dropped)", m.LastRound())
	}
	for _, r := range []int{5, 3, 10, 10, 15} {
		if _, err := m.Append(r, map[string]int{"round": r}); err != nil {
			t.Fatal(err)
		}
	}
	m.Close()
	b, _ := os.ReadFile(path)
	want := "{\"round\":0}\n{\"round\":5}\n{\"round\":10}\n{\"round\":15}\n"
	if string(b) != want {
		t.Fatalf("file:\n%s\nwant:\n%s", b, want)
	}
	// fresh truncates
	m, err = OpenMetricsLog(path, true)
	if err != nil {
		t.Fatal(err)
	}
	if m.LastRound() != -1 {
		t.Fatalf("fresh LastRound = %d", m.LastRound())
	}
	m.Close()
	os.WriteFile(path, []byte("not json\n"), 0o644)
	if _, err := OpenMetricsLog(path, false); err == nil {
		t.Fatal("garbage metrics file accepted")
	}
}
