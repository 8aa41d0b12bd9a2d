package e2e

import (
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shuffledp/shuffledp/pki"
)

// pemBlock returns the DER of the first PEM block of path.
func pemBlock(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		t.Fatalf("%s: no PEM block", path)
	}
	return blk.Bytes
}

// reissue signs, with the operator's authority of pki init's directory
// pkiDir (crypto/x509 directly: pki issues only valid certificates), a
// copy of role's certificate (same key, identity and hosts) valid from
// from to to, and writes it over role's certificate in its bundle. It
// returns the certificate's PEM.
func reissue(t *testing.T, pkiDir, role string, from, to time.Time) []byte {
	t.Helper()
	ca, err := x509.ParseCertificate(pemBlock(t, filepath.Join(pkiDir, pki.OperatorDir, pki.CAFile)))
	if err != nil {
		t.Fatal(err)
	}
	caKey, err := x509.ParsePKCS8PrivateKey(pemBlock(t, filepath.Join(pkiDir, pki.OperatorDir, pki.CAKeyFile)))
	if err != nil {
		t.Fatal(err)
	}
	bundle := filepath.Join(pkiDir, role)
	old, err := x509.ParseCertificate(pemBlock(t, filepath.Join(bundle, pki.CertFile(role))))
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: old.Subject, NotBefore: from, NotAfter: to,
		KeyUsage: old.KeyUsage, ExtKeyUsage: old.ExtKeyUsage, URIs: old.URIs, IPAddresses: old.IPAddresses, DNSNames: old.DNSNames}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, old.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	out := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if err := os.WriteFile(filepath.Join(bundle, pki.CertFile(role)), out, 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestOwnCertificateValidityAtStart: each role (server, shuffler, client
// commands) refuses to start on its own certificate when it is expired or
// not yet valid, with an error naming the certificate file and saying
// which; the server leaves no state behind.
func TestOwnCertificateValidityAtStart(t *testing.T) {
	now := time.Now()
	day := 24 * time.Hour
	for _, v := range []struct {
		name, want string
		from, to   time.Time
	}{
		{"expired", "has expired", now.Add(-30 * day), now.Add(-day)},
		{"not yet valid", "is not yet valid", now.Add(day), now.Add(30 * day)},
	} {
		for _, role := range []string{pki.RoleServer, pki.RoleShuffler, pki.RoleClient} {
			t.Run(v.name+"/"+role, func(t *testing.T) {
				dir := t.TempDir()
				pkiDir := filepath.Join(dir, "pki")
				creds := filepath.Join(dir, "creds.json")
				for _, args := range [][]string{{"init", "--dir", pkiDir}, {"enrol", "--dir", pkiDir, "--clients", "0:20", "--out", creds}} {
					if out, err := runCmd(t, "pki", args...); err != nil {
						t.Fatalf("pki %v: %v\n%s", args, err, out)
					}
				}
				reissue(t, pkiDir, role, v.from, v.to)
				bundle := filepath.Join(pkiDir, role)
				state := filepath.Join(dir, "state")
				var out string
				var err error
				switch role {
				case pki.RoleServer:
					out, err = runCmd(t, "server", "--listen", "127.0.0.1:0", "--state", state, "--pki", bundle, "--dataset", "synthetic",
						"--model", "logreg", "--clients", "20", "--sample", "5", "--eps0", "2", "--no-progress")
				case pki.RoleShuffler:
					out, err = runCmd(t, "shuffler", "--listen", "127.0.0.1:0", "--state", state, "--pki", bundle, "--server", closedPort(t),
						"--connect-timeout", "5s")
				case pki.RoleClient:
					out, err = runCmd(t, "client", "--shuffler", closedPort(t), "--server", closedPort(t), "--clients", "0:20",
						"--pki", bundle, "--credentials", creds, "--connect-timeout", "5s")
				}
				file := filepath.Join(bundle, pki.CertFile(role))
				if err == nil || !strings.Contains(err.Error(), v.want) || !strings.Contains(err.Error(), file) {
					t.Fatalf("%s on a certificate that %s: %v, want an error naming %q and %s\n%s", role, v.want, err, v.want, file, out)
				}
				if _, err := os.Lstat(state); !os.IsNotExist(err) {
					t.Errorf("the refused start left %s behind (%v)", state, err)
				}
			})
		}
	}
}

// TestPeerCertificateExpired: a shuffler dialling a "server" whose
// certificate (of this deployment, with the server's identity) has
// expired, and a client dialling such a "shuffler", stop at once with an
// error saying the peer's certificate has expired — not an endless wait.
func TestPeerCertificateExpired(t *testing.T) {
	now := time.Now()
	for _, role := range []string{pki.RoleServer, pki.RoleShuffler} {
		t.Run(role, func(t *testing.T) {
			dir := t.TempDir()
			pkiDir := filepath.Join(dir, "pki")
			creds := filepath.Join(dir, "creds.json")
			for _, args := range [][]string{{"init", "--dir", pkiDir}, {"enrol", "--dir", pkiDir, "--clients", "0:20", "--out", creds}} {
				if out, err := runCmd(t, "pki", args...); err != nil {
					t.Fatalf("pki %v: %v\n%s", args, err, out)
				}
			}
			certPEM := reissue(t, pkiDir, role, now.Add(-30*24*time.Hour), now.Add(-time.Hour))
			keyPEM, err := os.ReadFile(filepath.Join(pkiDir, role, pki.KeyFile(role)))
			if err != nil {
				t.Fatal(err)
			}
			kp, err := tls.X509KeyPair(certPEM, keyPEM)
			if err != nil {
				t.Fatal(err)
			}
			lis, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{kp}, NextProtos: []string{"h2"}})
			if err != nil {
				t.Fatal(err)
			}
			defer lis.Close()
			go func() {
				for {
					c, err := lis.Accept()
					if err != nil {
						return
					}
					go func(c net.Conn) { c.(*tls.Conn).Handshake(); c.Close() }(c)
				}
			}()
			addr := lis.Addr().String()
			start := time.Now()
			var out string
			if role == pki.RoleServer {
				out, err = runCmd(t, "shuffler", "--listen", "127.0.0.1:0", "--state", filepath.Join(dir, "state"),
					"--pki", filepath.Join(pkiDir, pki.RoleShuffler), "--server", addr, "--connect-timeout", "20s")
			} else {
				// The client asks the server first: a real one.
				srv := startNetProc(t, "server", nil, "server", "--listen", "127.0.0.1:0", "--addr-file", filepath.Join(dir, "srv.addr"),
					"--state", filepath.Join(dir, "server"), "--pki", filepath.Join(pkiDir, "server"), "--dataset", "synthetic", "--model", "logreg",
					"--clients", "20", "--sample", "5", "--eps0", "2", "--epochs", "1000", "--eval-every", "1000", "--test-size", "50", "--no-progress")
				srvAddr := waitFile(t, filepath.Join(dir, "srv.addr"), srv.cmd, srv.out.b)
				defer srv.stop(10 * time.Second)
				start = time.Now()
				out, err = runCmd(t, "client", "--shuffler", addr, "--server", srvAddr, "--clients", "0:20",
					"--pki", filepath.Join(pkiDir, pki.RoleClient), "--credentials", creds, "--connect-timeout", "20s")
			}
			if err == nil || !strings.Contains(err.Error(), "has expired") || !strings.Contains(err.Error(), addr) {
				t.Fatalf("dialling a %s with an expired certificate: %v, want an error naming %s and \"has expired\"\n%s", role, err, addr, out)
			}
			if took := time.Since(start); took > 10*time.Second {
				t.Fatalf("gave up after %v: a certificate problem should end the wait at once", took)
			}
		})
	}
}

// TestPKIRevokeCommand: pki rotate --revoke revokes the replaced
// certificate (its serial in every bundle's revocation list); pki revoke
// takes a serial as rotate prints it, says when it was revoked already,
// and refuses a malformed one naming the flag's value.
func TestPKIRevokeCommand(t *testing.T) {
	pkiDir := filepath.Join(t.TempDir(), "pki")
	if out, err := runCmd(t, "pki", "init", "--dir", pkiDir); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	old, err := x509.ParseCertificate(pemBlock(t, filepath.Join(pkiDir, pki.RoleServer, pki.CertFile(pki.RoleServer))))
	if err != nil {
		t.Fatal(err)
	}
	out, err := runCmd(t, "pki", "rotate", "--dir", pkiDir, "--role", "server", "--revoke")
	if err != nil || !strings.Contains(out, "revoked the replaced certificate") {
		t.Fatalf("rotate --revoke: %v\n%s", err, out)
	}
	for _, role := range pki.Roles {
		b, err := os.ReadFile(filepath.Join(pkiDir, role, pki.RevokedFile))
		if err != nil || !strings.Contains(string(b), old.SerialNumber.Text(16)+"\n") {
			t.Fatalf("%s's bundle: revocation list %q, %v; want serial %x", role, b, err, old.SerialNumber)
		}
	}
	out, err = runCmd(t, "pki", "revoke", "--dir", pkiDir, "--serial", old.SerialNumber.Text(16))
	if err != nil || !strings.Contains(out, "already revoked") {
		t.Fatalf("revoke again: %v\n%s", err, out)
	}
	if _, err := runCmd(t, "pki", "revoke", "--dir", pkiDir, "--serial", "zz"); err == nil || !strings.Contains(err.Error(), `"zz"`) {
		t.Fatalf("revoke --serial zz: %v", err)
	}
	// The rotated server's bundle loads (its own serial is not listed).
	if _, err := pki.ServerTLS(filepath.Join(pkiDir, "server"), pki.RoleServer); err != nil {
		t.Fatalf("the rotated server's bundle: %v", err)
	}
}
