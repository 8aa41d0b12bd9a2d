package pki

import (
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// copyBundle copies the bundle dir/role to a fresh directory (the old
// bundle a compromised host still holds).
func copyBundle(t *testing.T, dir, role string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), role)
	if err := os.Mkdir(out, 0o700); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(filepath.Join(dir, role))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, role, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(out, e.Name()), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestRevoke: after pki rotate --revoke of the shuffler, the server (its
// bundle holding the new revocation list) refuses, inside the handshake, a
// peer still presenting the old shuffler certificate, with a RevokedError
// naming the serial, and accepts the new one; the old bundle, given the
// new list, refuses to start on its own revoked certificate, naming the
// file. Before the revocation the same old certificate was accepted (the
// negative control).
func TestRevoke(t *testing.T) {
	dir := newPKI(t)
	oldShuffler := copyBundle(t, dir, RoleShuffler)
	server := func(t *testing.T) (serr, cerr error) {
		t.Helper()
		sc, err := ServerTLS(filepath.Join(dir, RoleServer), RoleServer)
		if err != nil {
			t.Fatal(err)
		}
		cc, err := ClientTLS(oldShuffler, RoleShuffler, RoleServer)
		if err != nil {
			t.Fatal(err)
		}
		cc, _ = RequirePeer(cc, RoleServer, "127.0.0.1")
		return handshake(t, sc, cc)
	}
	if serr, cerr := server(t); serr != nil || cerr != nil {
		t.Fatalf("before revocation the old shuffler certificate is refused: server %v, client %v", serr, cerr)
	}
	old, err := readCert(filepath.Join(dir, RoleShuffler, CertFile(RoleShuffler)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Rotate(dir, RotateConfig{Role: RoleShuffler, Revoke: true}); err != nil {
		t.Fatal(err)
	}
	for _, sub := range append([]string{OperatorDir}, Roles...) {
		list, err := readRevoked(filepath.Join(dir, sub, RevokedFile))
		if err != nil || !list[serialHex(old.SerialNumber)] || len(list) != 1 {
			t.Fatalf("%s/%s: %v, %v; want the old shuffler serial only", sub, RevokedFile, list, err)
		}
	}
	serr, _ := server(t)
	var rev *RevokedError
	if !errors.As(serr, &rev) || rev.Serial != serialHex(old.SerialNumber) || rev.Role != RoleShuffler || !strings.Contains(serr.Error(), "is revoked") {
		t.Fatalf("the server accepted or misreported a revoked shuffler certificate: %v", serr)
	}
	// The new shuffler certificate is accepted.
	sc, _ := ServerTLS(filepath.Join(dir, RoleServer), RoleServer)
	cc, _ := ClientTLS(filepath.Join(dir, RoleShuffler), RoleShuffler, RoleServer)
	cc, _ = RequirePeer(cc, RoleServer, "127.0.0.1")
	if serr, cerr := handshake(t, sc, cc); serr != nil || cerr != nil {
		t.Fatalf("the rotated shuffler: server %v, client %v", serr, cerr)
	}
	// The old bundle given the new list refuses to start, naming the file.
	list, _ := os.ReadFile(filepath.Join(dir, RoleShuffler, RevokedFile))
	if err := os.WriteFile(filepath.Join(oldShuffler, RevokedFile), list, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ServerTLS(oldShuffler, RoleShuffler); err == nil || !strings.Contains(err.Error(), "is revoked") ||
		!strings.Contains(err.Error(), filepath.Join(oldShuffler, CertFile(RoleShuffler))) {
		t.Fatalf("a role on its own revoked certificate: %v", err)
	}
	// Revoking again says so; a bundle is not the operator's directory.
	if already, err := Revoke(dir, old.SerialNumber); err != nil || !already {
		t.Fatalf("second revocation: %v, %v", already, err)
	}
	if _, err := Revoke(filepath.Join(dir, RoleServer), big.NewInt(5)); err == nil || !strings.Contains(err.Error(), "authority key") {
		t.Fatalf("revoke in a bundle: %v", err)
	}
}

// TestParseSerial: the forms pki revoke accepts, and refusals naming the
// input.
func TestParseSerial(t *testing.T) {
	for in, want := range map[string]int64{"ff": 255, "0xFF": 255, "01:00": 256, " 1a ": 26} {
		if n, err := ParseSerial(in); err != nil || n.Int64() != want {
			t.Errorf("ParseSerial(%q) = %v, %v; want %d", in, n, err, want)
		}
	}
	for _, in := range []string{"", "0", "xyz", "-5", "0x"} {
		if _, err := ParseSerial(in); err == nil || !strings.Contains(err.Error(), "serial") {
			t.Errorf("ParseSerial(%q): %v, want an error", in, err)
		}
	}
}
