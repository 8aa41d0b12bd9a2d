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
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// Roles that hold a certificate.
const (
	RoleServer   = "server"
	RoleShuffler = "shuffler"
)

// File names inside a PKI directory.
const (
	CAFile         = "ca.pem"
	CAKeyFile      = "ca.key"
	ClientsKeyFile = "clients.key"
)

// CertFile and KeyFile are the certificate and key files of a role.
func CertFile(role string) string { return role + ".pem" }

// KeyFile is the private key file of a role.
func KeyFile(role string) string { return role + ".key" }

// Validity of the certificates Init issues.
const (
	caValidity   = 10 * 365 * 24 * time.Hour
	leafValidity = 2 * 365 * 24 * time.Hour
)

// Init creates the PKI directory dir (its parent must exist) if it does not
// hold one yet: the authority, the server's and the shuffler's certificates
// valid for hosts (IP addresses or DNS names; the loopback addresses and
// localhost are always included) and the client-credential secret. An
// existing complete directory is kept as it is (its certificates must
// already cover the hosts a deployment uses); a partial one is an error.
func Init(dir string, hosts []string) error {
	files := []string{CAFile, CAKeyFile, CertFile(RoleServer), KeyFile(RoleServer), CertFile(RoleShuffler), KeyFile(RoleShuffler), ClientsKeyFile}
	present := 0
	for _, f := range files {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			present++
		}
	}
	switch {
	case present == len(files):
		return nil
	case present > 0:
		return fmt.Errorf("pki %s: incomplete (%d of %d files); remove it or complete it", dir, present, len(files))
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("pki: %w", err)
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("pki: %w", err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "shuffledp local CA", Organization: []string{"shuffledp"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(caValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return fmt.Errorf("pki: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return fmt.Errorf("pki: %w", err)
	}
	if err := writeCert(filepath.Join(dir, CAFile), caDER); err != nil {
		return err
	}
	if err := writeKey(filepath.Join(dir, CAKeyFile), caKey); err != nil {
		return err
	}
	ips, names := sans(hosts)
	for _, role := range []string{RoleServer, RoleShuffler} {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return fmt.Errorf("pki: %w", err)
		}
		usage := []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		if role == RoleShuffler {
			usage = append(usage, x509.ExtKeyUsageClientAuth)
		}
		tmpl := &x509.Certificate{
			SerialNumber: serial(),
			Subject:      pkix.Name{CommonName: "shuffledp " + role, Organization: []string{"shuffledp"}, OrganizationalUnit: []string{role}},
			NotBefore:    now.Add(-time.Hour),
			NotAfter:     now.Add(leafValidity),
			KeyUsage:     x509.KeyUsageDigitalSignature,
			ExtKeyUsage:  usage,
			IPAddresses:  ips,
			DNSNames:     names,
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			return fmt.Errorf("pki: %s certificate: %w", role, err)
		}
		if err := writeCert(filepath.Join(dir, CertFile(role)), der); err != nil {
			return err
		}
		if err := writeKey(filepath.Join(dir, KeyFile(role)), key); err != nil {
			return err
		}
	}
	secret := make([]byte, secretSize)
	if _, err := rand.Read(secret); err != nil {
		return fmt.Errorf("pki: %w", err)
	}
	return writeSecret(filepath.Join(dir, ClientsKeyFile), secret)
}

// sans returns the IP addresses and DNS names of hosts, with the loopback
// addresses and localhost added.
func sans(hosts []string) ([]net.IP, []string) {
	ips := []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
	names := []string{"localhost"}
	for _, h := range hosts {
		if h == "" {
			continue
		}
		if ip := net.ParseIP(h); ip != nil {
			ips = append(ips, ip)
		} else {
			names = append(names, h)
		}
	}
	return ips, names
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(err) // crypto/rand does not fail
	}
	return n
}

func writeCert(path string, der []byte) error {
	return writeFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
}

func writeKey(path string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return fmt.Errorf("pki: %w", err)
	}
	return writeFile(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600)
}

// writeFile creates path exclusively with mode perm (never overwriting).
func writeFile(path string, data []byte, perm os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return fmt.Errorf("pki: %w", err)
	}
	_, err = f.Write(data)
	if serr := f.Sync(); err == nil {
		err = serr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("pki: %s: %w", path, err)
	}
	return nil
}

// CertPool returns a pool holding the authority's certificate from the PEM
// file caFile.
func CertPool(caFile string) (*x509.CertPool, error) {
	b, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("pki: %w", err)
	}
	p := x509.NewCertPool()
	if !p.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("pki: %s holds no PEM certificate", caFile)
	}
	return p, nil
}

// LoadKeyPair loads a role's certificate and key from dir, refusing a key
// file readable by others than its owner.
func LoadKeyPair(dir, role string) (tls.Certificate, error) {
	kp := filepath.Join(dir, KeyFile(role))
	if st, err := os.Stat(kp); err != nil {
		return tls.Certificate{}, fmt.Errorf("pki: %w", err)
	} else if st.Mode().Perm()&0o077 != 0 {
		return tls.Certificate{}, fmt.Errorf("pki: %s is readable by others (mode %v); chmod 600 it", kp, st.Mode().Perm())
	}
	c, err := tls.LoadX509KeyPair(filepath.Join(dir, CertFile(role)), kp)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("pki: %s: %w", role, err)
	}
	return c, nil
}

// ErrNotShuffler reports a peer that did not present the shuffler's
// certificate.
var ErrNotShuffler = errors.New("peer is not the shuffler (no shuffler client certificate)")
