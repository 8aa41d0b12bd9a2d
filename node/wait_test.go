package node

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math/big"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shuffledp/shuffledp/pki"
)

// testCA is a throwaway certificate authority for the wait tests.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

func newTestCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &testCA{cert: c, key: key}
}

func (ca *testCA) pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.cert)
	return p
}

// leaf issues a server certificate for host valid over [from, to].
func (ca *testCA) leaf(t *testing.T, host string, from, to time.Time) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "test " + host},
		NotBefore: from, NotAfter: to, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}
	if ip := net.ParseIP(host); ip != nil {
		tmpl.IPAddresses = []net.IP{ip}
	} else {
		tmpl.DNSNames = []string{host}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// tlsPeer listens on loopback and completes TLS handshakes with cert.
func tlsPeer(t *testing.T, cert tls.Certificate) string {
	t.Helper()
	lis, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13,
		NextProtos: []string{"h2"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lis.Close() })
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			go func() {
				c.(*tls.Conn).Handshake()
				c.Close()
			}()
		}
	}()
	return lis.Addr().String()
}

// closedAddr is a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	return addr
}

// TestWaitReachableNamesTheCause checks that every wait for a peer ends
// within its deadline with an error naming the peer, its address and the
// cause a user can act on: nothing listening, a host that does not
// resolve, a certificate of another CA, an expired or not-yet-valid
// certificate (with its dates), a certificate for another host; and that
// certificate problems end the wait at once instead of at the deadline.
func TestWaitReachableNamesTheCause(t *testing.T) {
	ca, other := newTestCA(t, "deployment CA"), newTestCA(t, "another CA")
	now := time.Now()
	day := 24 * time.Hour
	good := ca.leaf(t, "127.0.0.1", now.Add(-day), now.Add(day))
	cases := []struct {
		name  string
		addr  string
		want  []string
		final bool // ends before the deadline
	}{
		{"reachable", tlsPeer(t, good), nil, true},
		{"nothing listens", closedAddr(t), []string{"did not answer within", "connection refused"}, false},
		{"unresolvable host", "nosuchhost.invalid:7060", []string{"nosuchhost.invalid:7060", `cannot resolve host "nosuchhost.invalid"`}, false},
		{"another CA", tlsPeer(t, other.leaf(t, "127.0.0.1", now.Add(-day), now.Add(day))), []string{"another CA", `issuer "CN=another CA"`}, true},
		{"expired", tlsPeer(t, ca.leaf(t, "127.0.0.1", now.Add(-3*day), now.Add(-2*day))),
			[]string{"has expired", "valid from " + now.Add(-3*day).UTC().Format("2006-01-02"), "to " + now.Add(-2*day).UTC().Format("2006-01-02")}, true},
		{"not yet valid", tlsPeer(t, ca.leaf(t, "127.0.0.1", now.Add(2*day), now.Add(3*day))),
			[]string{"is not yet valid", "valid from " + now.Add(2*day).UTC().Format("2006-01-02")}, true},
		{"another host", tlsPeer(t, ca.leaf(t, "10.9.8.7", now.Add(-day), now.Add(day))), []string{`not valid for host "127.0.0.1"`}, true},
	}
	const timeout = 700 * time.Millisecond
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			err := waitReachable(context.Background(), "server", c.addr, &tls.Config{RootCAs: ca.pool(), MinVersion: tls.VersionTLS13}, timeout)
			took := time.Since(start)
			if took > timeout+probeTimeout/2 {
				t.Fatalf("waited %v past a %v deadline", took, timeout)
			}
			if c.want == nil {
				if err != nil {
					t.Fatalf("reachable peer: %v", err)
				}
				return
			}
			var pe *PeerError
			if !errors.As(err, &pe) || pe.Addr != c.addr || !strings.Contains(err.Error(), "the server at "+c.addr) {
				t.Fatalf("error %v does not name the server at %s", err, c.addr)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if c.final && took > timeout/2 {
				t.Errorf("a certificate problem waited %v (the whole deadline)", took)
			}
			t.Logf("%v: %v", took, err)
			if !c.final && took < timeout*9/10 {
				t.Errorf("a retryable problem gave up after %v, before the %v deadline", took, timeout)
			}
		})
	}
}

// TestCheckOwnCertificates checks that a role refuses to start on its own
// certificate when it is expired or not yet valid, naming its dates.
func TestCheckOwnCertificates(t *testing.T) {
	ca := newTestCA(t, "deployment CA")
	now := time.Now()
	day := 24 * time.Hour
	cases := []struct {
		name     string
		from, to time.Time
		want     string
	}{
		{"valid", now.Add(-day), now.Add(day), ""},
		{"expired", now.Add(-3 * day), now.Add(-day), "has expired: valid from " + now.Add(-3*day).UTC().Format(time.RFC3339)},
		{"not yet valid", now.Add(day), now.Add(3 * day), "is not yet valid: valid from " + now.Add(day).UTC().Format(time.RFC3339)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tc := &tls.Config{Certificates: []tls.Certificate{ca.leaf(t, "127.0.0.1", c.from, c.to)}}
			err := CheckOwnCertificates("shuffler", tc, now)
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "shuffler: its own certificate") {
				t.Fatalf("got %v, want an error with %q", err, c.want)
			}
		})
	}
}

// pkiPeer listens on loopback with role's certificate of the deployment in
// dir (pki.ServerTLS) and completes TLS handshakes.
func pkiPeer(t *testing.T, dir, role string) string {
	t.Helper()
	tc, err := pki.ServerTLS(filepath.Join(dir, role), role)
	if err != nil {
		t.Fatal(err)
	}
	tc.NextProtos = []string{"h2"}
	lis, err := tls.Listen("tcp", "127.0.0.1:0", tc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lis.Close() })
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			go func() {
				c.(*tls.Conn).Handshake()
				c.Close()
			}()
		}
	}()
	return lis.Addr().String()
}

// TestWaitReachableRoleAndCA checks the wait with the configurations pki
// makes (the role check inside the handshake): a client dialling the
// shuffler's address as the server (--server and --shuffler swapped), or
// a server of another deployment, gives up at once naming the cause.
func TestWaitReachableRoleAndCA(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	for _, d := range []string{dir, other} {
		if err := pki.Init(d, nil); err != nil {
			t.Fatal(err)
		}
	}
	tc, err := pki.ClientTLS(filepath.Join(dir, pki.RoleClient), pki.RoleClient)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, role, addr, want string
	}{
		{"the server", pki.RoleServer, pkiPeer(t, dir, pki.RoleServer), ""},
		{"swapped addresses", pki.RoleServer, pkiPeer(t, dir, pki.RoleShuffler), "another role's certificate"},
		{"another deployment", pki.RoleServer, pkiPeer(t, other, pki.RoleServer), "another CA"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			err := waitReachable(context.Background(), c.role, c.addr, tc, 5*time.Second)
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "the server at "+c.addr) {
				t.Fatalf("got %v, want an error naming the server at %s and %q", err, c.addr, c.want)
			}
			if took := time.Since(start); took > 2*time.Second {
				t.Fatalf("gave up after %v, want at once", took)
			}
			t.Log(err)
		})
	}
}
