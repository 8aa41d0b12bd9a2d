package pki

import (
	"bufio"
	"bytes"
	"crypto/x509"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// RevokedFile is the list of revoked certificate serial numbers: one
// lower-case hexadecimal serial a line ('#' starts a comment). The
// operator's list is DIR/operator/revoked.txt; pki revoke copies it into
// every bundle, where the TLS configurations of ServerTLS and ClientTLS
// refuse a peer presenting a listed certificate inside the handshake, and
// a role refuses to start on a listed certificate of its own.
const RevokedFile = "revoked.txt"

// RevokedError is a peer's certificate found in the bundle's revocation
// list.
type RevokedError struct {
	Role, Subject, Serial string
}

func (e *RevokedError) Error() string {
	return fmt.Sprintf("peer identity: its %s certificate (subject %q, serial %s) is revoked (%s)", e.Role, e.Subject, e.Serial, RevokedFile)
}

// serialHex is the form of a serial number in RevokedFile.
func serialHex(n *big.Int) string { return n.Text(16) }

// ParseSerial parses a serial number as pki revoke takes it: hexadecimal,
// optionally with a 0x prefix or colons between bytes (as openssl and
// pki rotate print it).
func ParseSerial(s string) (*big.Int, error) {
	h := strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(strings.TrimSpace(s), "0x"), ":", ""))
	n, ok := new(big.Int).SetString(h, 16)
	if !ok || h == "" || n.Sign() <= 0 {
		return nil, fmt.Errorf("serial must be a positive hexadecimal number, got %q", s)
	}
	return n, nil
}

// readRevoked reads a revocation list; a missing file is an empty list.
func readRevoked(path string) (map[string]bool, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return map[string]bool{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("pki: %w", err)
	}
	out := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for line := 1; sc.Scan(); line++ {
		l, _, _ := strings.Cut(sc.Text(), "#")
		if l = strings.TrimSpace(l); l == "" {
			continue
		}
		n, err := ParseSerial(l)
		if err != nil {
			return nil, fmt.Errorf("pki: %s line %d: %w", path, line, err)
		}
		out[serialHex(n)] = true
	}
	return out, sc.Err()
}

// Revoke adds serial to the operator's revocation list in the pki init
// directory dir and writes the list into every bundle (each file replaced
// atomically). Copy the bundles to their hosts and restart the roles: from
// then on no role completes a handshake with a peer presenting that
// certificate. Revoking the serial of a role's current certificate also
// stops that role from starting: rotate it first (pki rotate --revoke does
// both). It reports whether the serial was listed already.
func Revoke(dir string, serial *big.Int) (already bool, err error) {
	if serial == nil || serial.Sign() <= 0 {
		return false, fmt.Errorf("pki revoke: serial must be positive")
	}
	op := filepath.Join(dir, OperatorDir)
	if _, err := os.Stat(filepath.Join(op, CAKeyFile)); err != nil {
		return false, fmt.Errorf("pki revoke: %s holds no authority key (dir must be the directory pki init wrote, on the operator's machine): %w", dir, err)
	}
	list, err := readRevoked(filepath.Join(op, RevokedFile))
	if err != nil {
		return false, err
	}
	already = list[serialHex(serial)]
	list[serialHex(serial)] = true
	var b strings.Builder
	b.WriteString("# revoked certificate serial numbers (pki revoke); every bundle holds a copy\n")
	for _, s := range slices.Sorted(func(yield func(string) bool) {
		for s := range list {
			if !yield(s) {
				return
			}
		}
	}) {
		b.WriteString(s + "\n")
	}
	for _, sub := range append([]string{OperatorDir}, Roles...) {
		if err := replaceWhole(filepath.Join(dir, sub, RevokedFile), []byte(b.String())); err != nil {
			return already, fmt.Errorf("pki revoke: %w", err)
		}
	}
	return already, nil
}

// replaceWhole writes path atomically: a synced temporary file renamed
// over it.
func replaceWhole(path string, data []byte) error {
	tmp := path + ".tmp"
	os.Remove(tmp)
	if err := writeFile(tmp, data, 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return syncDir(filepath.Dir(path))
}

// revocations maps the authority pool of a configuration made by
// ServerTLS or ClientTLS to its bundle's revocation list, so that
// RequirePeer's narrower check keeps it.
var revocations sync.Map // *x509.CertPool -> map[string]bool

func revokedFor(pool *x509.CertPool) map[string]bool {
	if m, ok := revocations.Load(pool); ok {
		return m.(map[string]bool)
	}
	return nil
}
