package pki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// newPKI runs Init in a fresh directory and returns it.
func newPKI(t *testing.T, hosts ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "pki")
	if err := Init(dir, hosts); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestInitBundles(t *testing.T) {
	dir := newPKI(t, "10.1.2.3", "shuffler.example")
	want := map[string][]string{
		OperatorDir:  {"ca.key", "ca.pem", "clients.key"},
		RoleServer:   {"ca.pem", "server.key", "server.pem"},
		RoleShuffler: {"ca.pem", "clients.key", "shuffler.key", "shuffler.pem"},
		RoleClient:   {"ca.pem", "client.key", "client.pem"},
	}
	for sub, files := range want {
		es, err := os.ReadDir(filepath.Join(dir, sub))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range es {
			got = append(got, e.Name())
			st, _ := e.Info()
			secret := strings.HasSuffix(e.Name(), ".key")
			if secret && st.Mode().Perm() != 0o600 {
				t.Errorf("%s/%s: mode %v, want 0600", sub, e.Name(), st.Mode().Perm())
			}
		}
		if !slices.Equal(got, files) {
			t.Errorf("bundle %s holds %v, want exactly %v", sub, got, files)
		}
	}
	for _, r := range Roles {
		c, err := readCert(filepath.Join(dir, r, CertFile(r)))
		if err != nil {
			t.Fatal(err)
		}
		if len(c.URIs) != 1 || c.URIs[0].String() != "spiffe://shuffledp/"+r {
			t.Errorf("%s certificate identities %v", r, c.URIs)
		}
		if _, err := LoadKeyPair(filepath.Join(dir, r), r); err != nil {
			t.Errorf("%s bundle: %v", r, err)
		}
	}
	if _, err := LoadKeyPair(dir, RoleServer); err == nil || !strings.Contains(err.Error(), "is the directory pki init wrote") {
		t.Errorf("the pki init directory as a bundle: %v", err)
	}
}

// TestInitRerun: same hosts keep the directory; other hosts, a missing
// parent, a partial directory and the older layout are refused, each with
// an error saying what to do.
func TestInitRerun(t *testing.T) {
	dir := newPKI(t, "10.1.2.3")
	before, _ := os.ReadFile(filepath.Join(dir, RoleServer, KeyFile(RoleServer)))
	if kept, err := InitWith(dir, InitConfig{Hosts: []string{"10.1.2.3"}}); err != nil || !kept {
		t.Fatalf("rerun with the same hosts: kept %v, %v", kept, err)
	}
	after, _ := os.ReadFile(filepath.Join(dir, RoleServer, KeyFile(RoleServer)))
	if string(before) != string(after) {
		t.Fatal("a rerun with the same hosts changed the server's key")
	}
	err := Init(dir, []string{"10.9.9.9"})
	if err == nil || !strings.Contains(err.Error(), "[10.1.2.3]") || !strings.Contains(err.Error(), "[10.9.9.9]") || !strings.Contains(err.Error(), "pki rotate") {
		t.Errorf("rerun with other hosts: %v", err)
	}
	if err := Init(filepath.Join(t.TempDir(), "no", "such", "pki"), nil); err == nil || !strings.Contains(err.Error(), "parent directory") {
		t.Errorf("missing parent: %v", err)
	}
	partial := t.TempDir()
	os.WriteFile(filepath.Join(partial, "junk"), []byte("x"), 0o600)
	if err := Init(partial, nil); err == nil || !strings.Contains(err.Error(), "not a complete PKI") {
		t.Errorf("partial directory: %v", err)
	}
	old := t.TempDir()
	for _, f := range []string{"ca.pem", "ca.key", "server.pem", "server.key", "shuffler.pem", "shuffler.key", "clients.key"} {
		os.WriteFile(filepath.Join(old, f), []byte("x"), 0o600)
	}
	if err := Init(old, nil); err == nil || !strings.Contains(err.Error(), "older single-directory layout") {
		t.Errorf("old layout, init: %v", err)
	}
	if _, err := ServerTLS(old, RoleServer); err == nil || !strings.Contains(err.Error(), "older single-directory layout") {
		t.Errorf("old layout, server: %v", err)
	}
}

func TestParseHosts(t *testing.T) {
	good := []struct {
		in   []string
		want []string
	}{
		{nil, nil},
		{[]string{"10.0.0.1", "Shuffler.Example.", "fd00::1", "a-b.c"}, []string{"10.0.0.1", "shuffler.example", "fd00::1", "a-b.c"}},
	}
	for _, c := range good {
		got, err := ParseHosts(c.in)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("ParseHosts(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	bad := []struct {
		in   []string
		want string
	}{
		{[]string{""}, "empty entry"},
		{[]string{"10.0.0.1:7060"}, "colon"},
		{[]string{"https://x.example"}, "URL"},
		{[]string{"bad_name.example"}, "neither an IP address nor a DNS name"},
		{[]string{"-x.example"}, "hyphen"},
		{[]string{"a..b"}, "empty label"},
		{[]string{"10.0.0"}, "all-numeric"},
		{[]string{" 10.0.0.1"}, "spaces"},
		{[]string{"0.0.0.0"}, "unspecified"},
		{[]string{strings.Repeat("a", 64) + ".example"}, "longer than 63"},
		{[]string{"10.0.0.1", "10.0.0.1"}, "given twice"},
		{[]string{"10.0.0.1", "::ffff:10.0.0.1"}, "given twice"},
		{[]string{"x.example", "X.EXAMPLE"}, "given twice"},
		{[]string{"localhost"}, "always included"},
		{[]string{"127.0.0.1"}, "always included"},
	}
	for _, c := range bad {
		if _, err := ParseHosts(c.in); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseHosts(%q) = %v, want an error containing %q", c.in, err, c.want)
		}
		if err := Init(filepath.Join(t.TempDir(), "pki"), c.in); err == nil {
			t.Errorf("Init with hosts %q succeeded", c.in)
		}
	}
}

// rawCert loads a role's certificate and key as an impostor would use
// them: without any of ServerTLS's or ClientTLS's checks.
func rawCert(t *testing.T, dir, role string) tls.Certificate {
	t.Helper()
	c, err := tls.LoadX509KeyPair(filepath.Join(dir, role, CertFile(role)), filepath.Join(dir, role, KeyFile(role)))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// handshake runs a TLS handshake over a pipe and returns both sides'
// errors; the client also reads, so a refusal of its certificate that
// TLS 1.3 reports after the client's handshake returned is seen.
func handshake(t *testing.T, srvConf, cliConf *tls.Config) (serr, cerr error) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	done := make(chan error, 1)
	go func() {
		a, err := lis.Accept()
		if err != nil {
			done <- err
			return
		}
		a.SetDeadline(time.Now().Add(10 * time.Second))
		srv := tls.Server(a, srvConf)
		err = srv.Handshake()
		if err == nil {
			_, err = srv.Write([]byte("ok"))
		}
		srv.Close()
		done <- err
	}()
	b, err := net.Dial("tcp", lis.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	b.SetDeadline(time.Now().Add(10 * time.Second))
	cli := tls.Client(b, cliConf)
	cerr = cli.Handshake()
	if cerr == nil {
		buf := make([]byte, 2)
		_, cerr = io.ReadFull(cli, buf)
	}
	cli.Close()
	return <-done, cerr
}

// TestRoleHandshakes: every listener against every role a caller may
// present (and none, and a certificate of another authority), and every
// dialler against a listener presenting each role's certificate. A
// handshake completes exactly when the role is one the other side accepts;
// otherwise the refusing side's error names the expected and the presented
// role.
func TestRoleHandshakes(t *testing.T) {
	dir := newPKI(t)
	other := newPKI(t) // another deployment's authority, same deployment name
	for _, listener := range []string{RoleServer, RoleShuffler} {
		for _, presented := range []string{RoleServer, RoleShuffler, RoleClient, "none", "other-ca"} {
			t.Run(listener+"/called-by-"+presented, func(t *testing.T) {
				sc, err := ServerTLS(filepath.Join(dir, listener), listener)
				if err != nil {
					t.Fatal(err)
				}
				cc := &tls.Config{MinVersion: tls.VersionTLS13, InsecureSkipVerify: true}
				switch presented {
				case "none":
				case "other-ca":
					cc.Certificates = []tls.Certificate{rawCert(t, other, RoleShuffler)}
				default:
					cc.Certificates = []tls.Certificate{rawCert(t, dir, presented)}
				}
				serr, cerr := handshake(t, sc, cc)
				ok := slices.Contains(Callers[listener], presented)
				if ok {
					if serr != nil || cerr != nil {
						t.Fatalf("handshake refused: server %v, client %v", serr, cerr)
					}
					return
				}
				if serr == nil || cerr == nil {
					t.Fatalf("handshake completed (server %v, client %v)", serr, cerr)
				}
				want := "expected role " + strings.Join(Callers[listener], " or ")
				switch presented {
				case "none":
					want += ", the peer presented no certificate"
				case "other-ca":
					want += "): x509: certificate signed by unknown authority"
				default:
					want += ", the peer presented role " + presented + " (spiffe://shuffledp/" + presented + ")"
				}
				if !strings.Contains(serr.Error(), want) {
					t.Errorf("listener's error %q, want it to contain %q", serr, want)
				}
			})
		}
	}
	for dialer, callees := range Callees {
		for _, expect := range callees {
			for _, presented := range Roles {
				t.Run(dialer+"/dials-"+expect+"/answered-by-"+presented, func(t *testing.T) {
					base, err := ClientTLS(filepath.Join(dir, dialer), dialer)
					if err != nil {
						t.Fatal(err)
					}
					cc, err := RequirePeer(base, expect, "localhost")
					if err != nil {
						t.Fatal(err)
					}
					sc := &tls.Config{MinVersion: tls.VersionTLS13, Certificates: []tls.Certificate{rawCert(t, dir, presented)}}
					serr, cerr := handshake(t, sc, cc)
					if presented == expect {
						if serr != nil || cerr != nil {
							t.Fatalf("handshake refused: server %v, client %v", serr, cerr)
						}
						return
					}
					if cerr == nil || serr == nil {
						t.Fatalf("handshake completed (server %v, client %v)", serr, cerr)
					}
					want := "expected role " + expect + ", the peer presented role " + presented + " (spiffe://shuffledp/" + presented + ")"
					if !strings.Contains(cerr.Error(), want) {
						t.Errorf("dialler's error %q, want it to contain %q", cerr, want)
					}
					var re *RoleError
					if !errors.As(cerr, &re) || re.Got != presented {
						t.Errorf("dialler's error %v is not a RoleError for %s", cerr, presented)
					}
				})
			}
		}
	}
}

// TestHostAndAuthority: the dialler still checks the host name and the
// authority after the role.
func TestHostAndAuthority(t *testing.T) {
	dir := newPKI(t, "shuffler.example")
	other := newPKI(t, "shuffler.example")
	base, err := ClientTLS(filepath.Join(dir, RoleClient), RoleClient, RoleShuffler)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, serverName string
		cert             tls.Certificate
		want             string
	}{
		{"SAN", "shuffler.example", rawCert(t, dir, RoleShuffler), ""},
		{"IP SAN", "127.0.0.1", rawCert(t, dir, RoleShuffler), ""},
		{"name not in SANs", "evil.example", rawCert(t, dir, RoleShuffler), "not evil.example"},
		{"other authority", "shuffler.example", rawCert(t, other, RoleShuffler), "unknown authority"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cc, err := RequirePeer(base, RoleShuffler, c.serverName)
			if err != nil {
				t.Fatal(err)
			}
			_, cerr := handshake(t, &tls.Config{MinVersion: tls.VersionTLS13, Certificates: []tls.Certificate{c.cert}}, cc)
			if c.want == "" {
				if cerr != nil {
					t.Fatal(cerr)
				}
				return
			}
			if cerr == nil || !strings.Contains(cerr.Error(), c.want) {
				t.Fatalf("error %v, want %q", cerr, c.want)
			}
		})
	}
}

// TestOldCertificateRefused: a certificate of the deployment's authority
// that names no role (as issued before roles) is refused in the handshake
// and at load, telling the operator to run pki init again.
func TestOldCertificateRefused(t *testing.T) {
	dir := newPKI(t)
	ca, _ := readCert(filepath.Join(dir, OperatorDir, CAFile))
	caKey, err := readKey(filepath.Join(dir, OperatorDir, CAKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: serial(), Subject: pkix.Name{CommonName: "shuffledp shuffler", OrganizationalUnit: []string{"shuffler"}},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}, DNSNames: []string{"localhost"}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	oldCert := tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	sc, _ := ServerTLS(filepath.Join(dir, RoleServer), RoleServer)
	serr, _ := handshake(t, sc, &tls.Config{MinVersion: tls.VersionTLS13, InsecureSkipVerify: true, Certificates: []tls.Certificate{oldCert}})
	if serr == nil || !strings.Contains(serr.Error(), "names no role") || !strings.Contains(serr.Error(), "pki init") {
		t.Errorf("listener: %v", serr)
	}
	// The same certificate in a bundle is refused at load.
	b := filepath.Join(dir, RoleShuffler)
	kder, _ := x509.MarshalPKCS8PrivateKey(key)
	os.WriteFile(filepath.Join(b, CertFile(RoleShuffler)), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
	os.WriteFile(filepath.Join(b, KeyFile(RoleShuffler)), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), 0o600)
	if _, err := ServerTLS(b, RoleShuffler); err == nil || !errors.Is(err, ErrNoRole) || !strings.Contains(err.Error(), "pki init") {
		t.Errorf("load: %v", err)
	}
}

// TestForeignSecretRefused: a bundle holding another role's secret is
// refused (the server's host must not hold clients.key or the shuffler's
// key), and so is a role's bundle given to another role.
func TestForeignSecretRefused(t *testing.T) {
	dir := newPKI(t)
	srv := filepath.Join(dir, RoleServer)
	data, _ := os.ReadFile(filepath.Join(dir, OperatorDir, ClientsKeyFile))
	os.WriteFile(filepath.Join(srv, ClientsKeyFile), data, 0o600)
	if _, err := ServerTLS(srv, RoleServer); err == nil || !strings.Contains(err.Error(), "also holds clients.key") {
		t.Errorf("server bundle with clients.key: %v", err)
	}
	if _, err := ClientTLS(filepath.Join(dir, RoleShuffler), RoleClient); err == nil {
		t.Error("the shuffler's bundle loaded as a client's")
	}
	if _, err := ClientTLS(filepath.Join(dir, RoleClient), RoleClient, RoleClient); err == nil {
		t.Error("a client dialling a client accepted")
	}
}

// TestRotate: rotating a role replaces its key and certificate (and, when
// asked, its hosts) and nothing else; the new bundle handshakes.
func TestRotate(t *testing.T) {
	dir := newPKI(t, "10.1.2.3")
	snapshot := func() map[string]string {
		m := map[string]string{}
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				b, _ := os.ReadFile(p)
				rel, _ := filepath.Rel(dir, p)
				m[rel] = string(b)
			}
			return nil
		})
		return m
	}
	before := snapshot()
	oldCert, _ := readCert(filepath.Join(dir, RoleServer, CertFile(RoleServer)))
	c, err := Rotate(dir, RotateConfig{Role: RoleServer, Hosts: []string{"10.4.5.6"}, SetHosts: true})
	if err != nil {
		t.Fatal(err)
	}
	if c.SerialNumber.Cmp(oldCert.SerialNumber) == 0 || !slices.Equal(certHosts(c.IPAddresses, c.DNSNames), []string{"10.4.5.6"}) {
		t.Fatalf("rotated certificate: serial %x, hosts %v", c.SerialNumber, certHosts(c.IPAddresses, c.DNSNames))
	}
	after := snapshot()
	for f, v := range before {
		changed := after[f] != v
		if want := f == "server/server.pem" || f == "server/server.key"; changed != want {
			t.Errorf("%s changed: %v, want %v", f, changed, want)
		}
	}
	if len(after) != len(before) {
		t.Errorf("%d files after rotation, %d before", len(after), len(before))
	}
	sc, err := ServerTLS(filepath.Join(dir, RoleServer), RoleServer)
	if err != nil {
		t.Fatal(err)
	}
	base, _ := ClientTLS(filepath.Join(dir, RoleShuffler), RoleShuffler, RoleServer)
	cc, _ := RequirePeer(base, RoleServer, "10.4.5.6")
	if serr, cerr := handshake(t, sc, cc); serr != nil || cerr != nil {
		t.Fatalf("after rotation: server %v, client %v", serr, cerr)
	}
	// Without hosts the old ones are kept.
	c2, err := Rotate(dir, RotateConfig{Role: RoleServer})
	if err != nil || !slices.Equal(certHosts(c2.IPAddresses, c2.DNSNames), []string{"10.4.5.6"}) {
		t.Fatalf("rotation keeping hosts: %v", err)
	}
	for _, bad := range []RotateConfig{{Role: "ca"}, {Role: RoleClient, SetHosts: true, Hosts: []string{"x.example"}}, {Role: RoleShuffler, SetHosts: true, Hosts: []string{"a:1"}}} {
		if _, err := Rotate(dir, bad); err == nil {
			t.Errorf("Rotate(%+v) succeeded", bad)
		}
	}
	if _, err := Rotate(filepath.Join(dir, RoleServer), RotateConfig{Role: RoleServer}); err == nil {
		t.Error("Rotate on a bundle (no authority key) succeeded")
	}
}

// TestSecretModes: every secret with group or other permission bits is
// refused at load, naming the file and its mode.
func TestSecretModes(t *testing.T) {
	dir := newPKI(t)
	e, err := LoadEnroller(dir) // the operator's secret, via the init directory
	if err != nil {
		t.Fatal(err)
	}
	creds := filepath.Join(t.TempDir(), "creds.json")
	c, _ := e.Enrol(0, 3)
	if err := WriteCredentials(creds, c); err != nil {
		t.Fatal(err)
	}
	loads := map[string]func() error{
		filepath.Join(dir, RoleServer, KeyFile(RoleServer)): func() error {
			_, err := ServerTLS(filepath.Join(dir, RoleServer), RoleServer)
			return err
		},
		filepath.Join(dir, RoleClient, KeyFile(RoleClient)): func() error {
			_, err := ClientTLS(filepath.Join(dir, RoleClient), RoleClient)
			return err
		},
		filepath.Join(dir, RoleShuffler, ClientsKeyFile): func() error {
			_, err := LoadEnroller(filepath.Join(dir, RoleShuffler))
			return err
		},
		filepath.Join(dir, OperatorDir, CAKeyFile): func() error {
			_, err := Rotate(dir, RotateConfig{Role: RoleClient})
			return err
		},
		creds: func() error {
			_, err := ReadCredentials(creds)
			return err
		},
	}
	for path, load := range loads {
		if err := load(); err != nil {
			t.Fatalf("%s at 0600: %v", path, err)
		}
		for _, mode := range []os.FileMode{0o640, 0o604, 0o620, 0o644} {
			os.Chmod(path, mode)
			err := load()
			if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "0"+strings.TrimLeft(mode.String(), "-")) && !strings.Contains(err.Error(), "mode 0"+octal(mode)) {
				t.Errorf("%s at %#o: %v", path, mode, err)
			}
		}
		os.Chmod(path, 0o600)
	}
}

func octal(m os.FileMode) string {
	const digits = "01234567"
	return string([]byte{digits[m>>6&7], digits[m>>3&7], digits[m&7]})
}

func TestCredentials(t *testing.T) {
	dir := newPKI(t)
	e, err := LoadEnroller(filepath.Join(dir, RoleShuffler))
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
	if _, err := e.Enrol(0, MaxEnrol+1); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("more than MaxEnrol clients: %v", err)
	}
}
