package pki

import (
	"crypto/tls"
	"net"
	"os"
	"path/filepath"
	"testing"
)

func TestInitHandshake(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pki")
	if err := Init(dir, []string{"10.1.2.3", "shuffler.example"}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{CAKeyFile, KeyFile(RoleServer), KeyFile(RoleShuffler), ClientsKeyFile} {
		st, err := os.Stat(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", f, st.Mode().Perm())
		}
	}
	if err := Init(dir, nil); err != nil { // complete: kept
		t.Fatalf("second Init: %v", err)
	}
	cases := []struct {
		name       string
		clientRole string
		serverName string
		wantErr    bool
		shuffler   bool
	}{
		{"anonymous client", "", "127.0.0.1", false, false},
		{"shuffler client cert", RoleShuffler, "localhost", false, true},
		{"extra SAN", "", "shuffler.example", false, false},
		{"name not in SANs", "", "evil.example", true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sc, err := ServerTLS(dir, RoleServer)
			if err != nil {
				t.Fatal(err)
			}
			cc, err := ClientTLS(filepath.Join(dir, CAFile), dir, c.clientRole)
			if err != nil {
				t.Fatal(err)
			}
			cc.ServerName = c.serverName
			a, b := net.Pipe()
			srv, cli := tls.Server(a, sc), tls.Client(b, cc)
			done := make(chan error, 1)
			go func() { done <- srv.Handshake() }()
			cerr := cli.Handshake()
			cli.Close()
			serr := <-done
			if c.wantErr {
				if cerr == nil {
					t.Fatal("handshake succeeded, want a certificate error")
				}
				return
			}
			if cerr != nil || serr != nil {
				t.Fatalf("handshake: client %v, server %v", cerr, serr)
			}
			if got := IsShuffler(srv.ConnectionState()); got != c.shuffler {
				t.Errorf("IsShuffler = %v, want %v", got, c.shuffler)
			}
		})
	}
}

func TestPartialInitRefused(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, CAFile), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Init(dir, nil); err == nil {
		t.Fatal("Init over a partial directory succeeded")
	}
}

func TestCredentials(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pki")
	if err := Init(dir, nil); err != nil {
		t.Fatal(err)
	}
	e, err := LoadEnroller(dir)
	if err != nil {
		t.Fatal(err)
	}
	c, err := e.Enrol(5, 9)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "creds.json")
	if err := WriteCredentials(path, c); err != nil {
		t.Fatal(err)
	}
	got, err := ReadCredentials(path)
	if err != nil {
		t.Fatal(err)
	}
	for id := int64(5); id < 9; id++ {
		if !e.Verify(id, got.Token(id)) {
			t.Errorf("client %d: its own token refused", id)
		}
		if e.Verify(id+1, got.Token(id)) {
			t.Errorf("client %d's token accepted for client %d", id, id+1)
		}
	}
	if got.Token(4) != nil || got.Token(9) != nil {
		t.Error("tokens outside [lo, hi)")
	}
	other, _ := NewEnroller(make([]byte, 32))
	if other.Verify(5, got.Token(5)) {
		t.Error("token accepted under another secret")
	}
	if _, err := e.Enrol(3, 3); err == nil {
		t.Error("empty range enrolled")
	}
	if err := os.Chmod(filepath.Join(dir, ClientsKeyFile), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadEnroller(dir); err == nil {
		t.Error("world-readable secret accepted")
	}
}
