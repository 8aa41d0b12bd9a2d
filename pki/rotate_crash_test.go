package pki

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shuffledp/shuffledp/internal/faultpoint"
)

// TestRotateCrashHelper is the process the crash test kills: it rotates
// the shuffler's key in $SHUFFLEDP_ROTATE_DIR (with the two-rename fallback
// if $SHUFFLEDP_ROTATE_FALLBACK is set), with a fault point armed.
func TestRotateCrashHelper(t *testing.T) {
	dir := os.Getenv("SHUFFLEDP_ROTATE_DIR")
	if dir == "" {
		t.Skip("the crash test's child process")
	}
	if os.Getenv("SHUFFLEDP_ROTATE_FALLBACK") != "" {
		exchangeDirs = func(string, string) error { return errNoExchange }
	}
	if _, err := Rotate(dir, RotateConfig{Role: RoleShuffler}); err != nil {
		t.Fatal(err)
	}
}

// TestRotateCrash kills pki rotate (SIGKILL, internal/faultpoint) at every
// step — the new bundle built, the switch half done (two-rename fallback
// only), the switch done — with the atomic directory exchange and with the
// fallback, and checks that the shuffler's bundle then holds a matching
// key and certificate (the old pair before the switch, the new one after),
// or, half-switched, no bundle, which the next rotate restores; the next
// rotate succeeds and leaves no leftover; nothing else changes.
func TestRotateCrash(t *testing.T) {
	for _, tc := range []struct {
		point    string
		fallback bool
		want     string // "old", "new" or "missing"
	}{
		{PointRotateBuilt, false, "old"},
		{PointRotateSwitched, false, "new"},
		{PointRotateBuilt, true, "old"},
		{PointRotateHalfSwitched, true, "missing"},
		{PointRotateSwitched, true, "new"},
	} {
		name := tc.point
		if tc.fallback {
			name += "/fallback"
		}
		t.Run(name, func(t *testing.T) {
			dir := newPKI(t, "10.1.2.3")
			bundle := filepath.Join(dir, RoleShuffler)
			old, err := os.ReadFile(filepath.Join(bundle, CertFile(RoleShuffler)))
			if err != nil {
				t.Fatal(err)
			}
			others := snapshotExcept(t, dir, RoleShuffler)
			cmd := exec.Command(os.Args[0], "-test.run=^TestRotateCrashHelper$", "-test.count=1")
			cmd.Env = append(os.Environ(), "SHUFFLEDP_ROTATE_DIR="+dir, faultpoint.EnvVar+"="+tc.point+"@1")
			if tc.fallback {
				cmd.Env = append(cmd.Env, "SHUFFLEDP_ROTATE_FALLBACK=1")
			}
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.Exited() {
				t.Fatalf("the rotation was not killed at %s: %v\n%s", tc.point, err, out)
			}
			_, lerr := LoadKeyPair(bundle, RoleShuffler)
			now, _ := os.ReadFile(filepath.Join(bundle, CertFile(RoleShuffler)))
			switch tc.want {
			case "old", "new":
				if lerr != nil {
					t.Fatalf("after a crash at %s the bundle does not load: %v", tc.point, lerr)
				}
				if isOld := bytes.Equal(now, old); isOld != (tc.want == "old") {
					t.Fatalf("after a crash at %s the bundle holds the old certificate: %v, want %s", tc.point, isOld, tc.want)
				}
			case "missing":
				if _, err := os.Stat(bundle); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("half-switched: the bundle is there (%v)", err)
				}
			}
			// The next rotation cleans up (or completes the switch) and succeeds.
			c, err := Rotate(dir, RotateConfig{Role: RoleShuffler})
			if err != nil {
				t.Fatalf("rotate after the crash: %v", err)
			}
			if _, err := LoadKeyPair(bundle, RoleShuffler); err != nil {
				t.Fatal(err)
			}
			if cur, _ := readCert(filepath.Join(bundle, CertFile(RoleShuffler))); cur.SerialNumber.Cmp(c.SerialNumber) != 0 {
				t.Fatal("the bundle does not hold the certificate Rotate returned")
			}
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				if strings.HasPrefix(e.Name(), ".") {
					t.Errorf("leftover %s after the next rotation", e.Name())
				}
			}
			for f, v := range snapshotExcept(t, dir, RoleShuffler) {
				if others[f] != v {
					t.Errorf("%s changed", f)
				}
			}
			for _, f := range BundleFiles(RoleShuffler) {
				if _, err := os.Stat(filepath.Join(bundle, f)); err != nil {
					t.Errorf("the rotated bundle lacks %s: %v", f, err)
				}
			}
		})
	}
}

// TestMismatchedPairNamed: a bundle whose key and certificate come from two
// rotations (what replacing the two files one after the other leaves when
// it is interrupted between them) is refused at load with an error naming
// both files.
func TestMismatchedPairNamed(t *testing.T) {
	dir := newPKI(t)
	bundle := filepath.Join(dir, RoleServer)
	oldKey, err := os.ReadFile(filepath.Join(bundle, KeyFile(RoleServer)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Rotate(dir, RotateConfig{Role: RoleServer}); err != nil {
		t.Fatal(err)
	}
	kp := filepath.Join(bundle, KeyFile(RoleServer))
	if err := os.WriteFile(kp, oldKey, 0o600); err != nil { // the old key, the new certificate
		t.Fatal(err)
	}
	_, err = LoadKeyPair(bundle, RoleServer)
	if err == nil || !strings.Contains(err.Error(), "do not belong together") || !strings.Contains(err.Error(), kp) ||
		!strings.Contains(err.Error(), filepath.Join(bundle, CertFile(RoleServer))) {
		t.Fatalf("mismatched key and certificate: %v", err)
	}
	if _, err := ServerTLS(bundle, RoleServer); err == nil {
		t.Fatal("ServerTLS accepted a mismatched pair")
	}
}

// snapshotExcept returns the contents of every file under dir outside
// dir/role.
func snapshotExcept(t *testing.T, dir, role string) map[string]string {
	t.Helper()
	m := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() && (rel == role || strings.HasPrefix(rel, ".")) {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			b, _ := os.ReadFile(p)
			m[rel] = string(b)
		}
		return nil
	})
	return m
}

// TestExchangeDirs: where the system has it, exchangeDirs swaps two
// directories in one step (the rotation's switch).
func TestExchangeDirs(t *testing.T) {
	base := t.TempDir()
	a, b := filepath.Join(base, "a"), filepath.Join(base, "b")
	for _, d := range []string{a, b} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "name"), []byte(filepath.Base(d)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	err := exchangeDirs(a, b)
	if errors.Is(err, errNoExchange) {
		t.Skip("no atomic directory exchange here: rotate uses two renames and recovers")
	}
	if err != nil {
		t.Fatal(err)
	}
	ga, _ := os.ReadFile(filepath.Join(a, "name"))
	gb, _ := os.ReadFile(filepath.Join(b, "name"))
	if string(ga) != "b" || string(gb) != "a" {
		t.Fatalf("after the exchange a holds %q, b holds %q", ga, gb)
	}
}
