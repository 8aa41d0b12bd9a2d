package pki

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/shuffledp/shuffledp/cliflag"
)

// TestRequests runs pki init, enrol, rotate and revoke as the command
// does (flags bound by cliflag.Bind) and checks what each says, and the
// flags its errors name.
func TestRequests(t *testing.T) {
	var in InitRequest
	fs := pflag.NewFlagSet("init", pflag.ContinueOnError)
	cliflag.MustBind(fs, &in)
	if in.Deployment != DefaultDeployment {
		t.Errorf("--deployment defaults to %q, want %q", in.Deployment, DefaultDeployment)
	}
	dir := filepath.Join(t.TempDir(), "pki")
	if err := fs.Parse([]string{"--dir", dir, "--hosts", "a.example"}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	for _, want := range []string{"copy " + filepath.Join(dir, RoleServer), "kept (complete, same hosts)"} {
		out.Reset()
		if err := in.Run(&out); err != nil || !strings.Contains(out.String(), want) {
			t.Errorf("init: %v, %q; want %q", err, out.String(), want)
		}
	}
	out.Reset()
	creds := filepath.Join(t.TempDir(), "creds")
	if err := (EnrolRequest{Dir: dir, Clients: "0:3", Out: creds}).Run(&out); err != nil || out.String() != "enrolled clients 0..2 (3 credentials) in "+creds+"\n" {
		t.Errorf("enrol: %v, %q", err, out.String())
	}
	out.Reset()
	if err := (RotateRequest{Dir: dir, Role: RoleServer, Revoke: true}).Run(&out, false); err != nil || !strings.Contains(out.String(), "rotated the server's key") || !strings.Contains(out.String(), "revoked the replaced certificate") {
		t.Errorf("rotate: %v, %q", err, out.String())
	}
	out.Reset()
	if err := (RevokeRequest{Dir: dir, Serial: "0a"}).Run(&out); err != nil || !strings.HasPrefix(out.String(), "revoked serial a (") {
		t.Errorf("revoke: %v, %q", err, out.String())
	}
	out.Reset()
	if err := (RevokeRequest{Dir: dir, Serial: "0a"}).Run(&out); err != nil || !strings.HasPrefix(out.String(), "already revoked serial a (") {
		t.Errorf("revoke again: %v, %q", err, out.String())
	}
	for _, tc := range []struct {
		run  func() error
		want string
	}{
		{func() error { return InitRequest{}.Run(&out) }, "dir is required"},
		{func() error { return EnrolRequest{Dir: dir}.Run(&out) }, "dir and out are required"},
		{func() error { return EnrolRequest{Dir: dir, Out: creds, Clients: "0:1000001"}.Run(&out) }, "at most 1000000 per credentials file"},
		{func() error { return RotateRequest{Dir: dir}.Run(&out, false) }, "dir and role are required"},
		{func() error { return RevokeRequest{Dir: dir}.Run(&out) }, "dir and serial are required"},
	} {
		if err := tc.run(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want one containing %q", err, tc.want)
		}
	}
}
