package cpuprofile

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStartWritesProfileAndUsage: with the variable set, a profile and a
// usage line land in the directory under ROLE-PID; unset, nothing is
// written.
func TestStartWritesProfileAndUsage(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "prof")
	t.Setenv(EnvVar, "")
	stop, err := Start("server")
	if err != nil {
		t.Fatal(err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("unset variable: %s exists (%v)", dir, err)
	}
	t.Setenv(EnvVar, dir)
	if stop, err = Start("server"); err != nil {
		t.Fatal(err)
	}
	x := 0
	for i := range 1 << 20 {
		x += i * i
	}
	_ = x
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	prof, _ := filepath.Glob(filepath.Join(dir, "server-*.pprof"))
	use, _ := filepath.Glob(filepath.Join(dir, "server-*.txt"))
	if len(prof) != 1 || len(use) != 1 {
		t.Fatalf("files %v %v, want one profile and one usage file", prof, use)
	}
	if fi, err := os.Stat(prof[0]); err != nil || fi.Size() == 0 {
		t.Fatalf("profile %s: %v, empty", prof[0], err)
	}
	b, _ := os.ReadFile(use[0])
	for _, f := range []string{"wall_s ", "user_s ", "sys_s ", "maxrss_mib "} {
		if !strings.Contains(string(b), f) {
			t.Errorf("usage %q lacks %q", b, f)
		}
	}
}

// TestHeapOnSignal: SIGUSR1 makes a profiled process write its live heap
// after a collection: a 64 MiB buffer still referenced is counted, and a
// heap profile is written beside it.
func TestHeapOnSignal(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(EnvVar, dir)
	stop, err := Start("shuffler")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	held := make([]byte, 64<<20)
	for i := range held {
		held[i] = byte(i)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	var line string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		got, _ := filepath.Glob(filepath.Join(dir, "shuffler-*.heap.txt"))
		prof, _ := filepath.Glob(filepath.Join(dir, "shuffler-*-heap-1.pprof"))
		if len(got) == 1 && len(prof) == 1 {
			b, _ := os.ReadFile(got[0])
			if line = strings.TrimSpace(string(b)); line != "" {
				if fi, err := os.Stat(prof[0]); err == nil && fi.Size() > 0 {
					break
				}
			}
		}
	}
	var live int64
	if _, err := fmt.Sscanf(line, "heap_live_bytes %d", &live); err != nil {
		t.Fatalf("heap line %q: %v", line, err)
	}
	if live < int64(len(held)) {
		t.Fatalf("live heap %d bytes, less than the %d held", live, len(held))
	}
	runtime.KeepAlive(held)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}
