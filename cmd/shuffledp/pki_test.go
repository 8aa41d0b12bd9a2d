package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPKICommands: pki init refuses a missing parent, malformed and
// duplicate hosts and a rerun with other hosts (naming pki rotate, which
// then reissues explicitly); enrol says what it wrote and refuses more
// than its documented maximum; rotate says what it replaced.
func TestPKICommands(t *testing.T) {
	dir := t.TempDir()
	pkiDir := filepath.Join(dir, "pki")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"init", "--dir", filepath.Join(dir, "missing", "pki")}, "parent directory " + filepath.Join(dir, "missing") + " does not exist"},
		{[]string{"init", "--dir", pkiDir, "--hosts", "10.0.0.1:7060"}, "colon"},
		{[]string{"init", "--dir", pkiDir, "--hosts", "10.0.0.1,10.0.0.1"}, "given twice"},
		{[]string{"init", "--dir", pkiDir, "--hosts", "a,,b"}, "empty entry"},
		{[]string{"init", "--dir", pkiDir, "--deployment", "Bad Name"}, "deployment"},
	} {
		out, err := runCmd(t, newPKICmd, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("pki %v: %v (%s), want an error containing %q", c.args, err, out, c.want)
		}
	}
	if _, err := os.Stat(pkiDir); err == nil {
		t.Fatal("a refused init left a directory")
	}
	out, err := runCmd(t, newPKICmd, "init", "--dir", pkiDir, "--hosts", "10.0.0.1")
	if err != nil || !strings.Contains(out, "copy "+filepath.Join(pkiDir, "server")+" to the server's host") {
		t.Fatalf("init: %v\n%s", err, out)
	}
	if out, err := runCmd(t, newPKICmd, "init", "--dir", pkiDir, "--hosts", "10.0.0.1"); err != nil || !strings.Contains(out, "kept") {
		t.Errorf("rerun, same hosts: %v\n%s", err, out)
	}
	if _, err := runCmd(t, newPKICmd, "init", "--dir", pkiDir, "--hosts", "10.0.0.2"); err == nil || !strings.Contains(err.Error(), "pki rotate") {
		t.Errorf("rerun, other hosts: %v", err)
	}
	creds := filepath.Join(dir, "creds.json")
	if out, err := runCmd(t, newPKICmd, "enrol", "--dir", pkiDir, "--clients", "0:60", "--out", creds); err != nil || !strings.Contains(out, "enrolled clients 0..59 (60 credentials) in "+creds) {
		t.Errorf("enrol: %v\n%s", err, out)
	}
	if _, err := runCmd(t, newPKICmd, "enrol", "--dir", pkiDir, "--clients", "0:1000001", "--out", filepath.Join(dir, "big.json")); err == nil || !strings.Contains(err.Error(), "at most 1000000") {
		t.Errorf("enrol beyond the maximum: %v", err)
	}
	for _, role := range []string{"server", "shuffler"} {
		out, err := runCmd(t, newPKICmd, "rotate", "--dir", pkiDir, "--role", role, "--hosts", "10.0.0.2")
		if err != nil || !strings.Contains(out, "rotated the "+role+"'s key and certificate") {
			t.Fatalf("rotate %s: %v\n%s", role, err, out)
		}
	}
	if out, err := runCmd(t, newPKICmd, "init", "--dir", pkiDir, "--hosts", "10.0.0.2"); err != nil || !strings.Contains(out, "kept") {
		t.Errorf("rerun with the rotated hosts: %v\n%s", err, out)
	}
}
