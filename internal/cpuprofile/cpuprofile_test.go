package cpuprofile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
