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
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// File names inside a bundle.
const (
	CAFile         = "ca.pem"
	CAKeyFile      = "ca.key"
	ClientsKeyFile = "clients.key"
)

// OperatorDir is the part of a pki init directory that never leaves the
// operator's trusted machine: the authority's key (to rotate
// certificates) and the client-credential secret (to enrol clients).
const OperatorDir = "operator"

// CertFile is the certificate file of a role.
func CertFile(role string) string { return role + ".pem" }

// KeyFile is the private key file of a role.
func KeyFile(role string) string { return role + ".key" }

// BundleFiles are the files of a host's bundle (the directory
// filepath.Join(dir, role) of a pki init directory): the authority's
// certificate and the role's certificate and key; the shuffler's also holds
// the client-credential secret it checks credentials with. A host holds
// its own bundle only: loading one that holds another role's secret fails.
func BundleFiles(role string) []string {
	fs := []string{CAFile, CertFile(role), KeyFile(role)}
	if role == RoleShuffler {
		fs = append(fs, ClientsKeyFile)
	}
	return fs
}

// operatorFiles are the files of the operator's part.
var operatorFiles = []string{CAFile, CAKeyFile, ClientsKeyFile}

// Validity of the certificates Init issues.
const (
	caValidity   = 10 * 365 * 24 * time.Hour
	leafValidity = 2 * 365 * 24 * time.Hour
)

// InitConfig configures InitWith.
type InitConfig struct {
	// Hosts are the extra host names and IP addresses of the server's and
	// the shuffler's certificates (checked by ParseHosts; the loopback
	// addresses and localhost are always included).
	Hosts []string
	// Deployment is the trust domain of the identities (""
	// DefaultDeployment).
	Deployment string
}

// Init is InitWith with the default deployment name.
func Init(dir string, hosts []string) error {
	_, err := InitWith(dir, InitConfig{Hosts: hosts})
	return err
}

// InitWith creates the PKI directory dir (its parent must exist; Init never
// creates parents) with one bundle per host (BundleFiles; keys 0600):
//
//	dir/operator/  ca.pem ca.key clients.key   stays on the operator's machine
//	dir/server/    ca.pem server.pem server.key
//	dir/shuffler/  ca.pem shuffler.pem shuffler.key clients.key
//	dir/client/    ca.pem client.pem client.key  (+ pki enrol's credentials)
//
// Each certificate names its role (Identity). A directory that already
// holds a complete PKI for the same hosts and deployment is kept (kept is
// true); one for other hosts is refused (pki rotate reissues the
// certificates for new hosts explicitly), as are a partial directory and
// one of the older single-directory layout.
func InitWith(dir string, cfg InitConfig) (kept bool, err error) {
	if cfg.Deployment == "" {
		cfg.Deployment = DefaultDeployment
	}
	if err := checkDeployment(cfg.Deployment); err != nil {
		return false, fmt.Errorf("pki init: %w", err)
	}
	hosts, err := ParseHosts(cfg.Hosts)
	if err != nil {
		return false, fmt.Errorf("pki init: %w", err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return false, fmt.Errorf("pki init: %w", err)
	}
	parent := filepath.Dir(abs)
	if st, err := os.Stat(parent); err != nil || !st.IsDir() {
		return false, fmt.Errorf("pki init --dir %s: its parent directory %s does not exist (pki init creates no parents)", dir, parent)
	}
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return false, fmt.Errorf("pki init: %w", err)
	case len(entries) > 0:
		return true, checkExisting(dir, hosts, cfg.Deployment)
	default:
		if err := os.Remove(dir); err != nil { // empty: built aside and renamed
			return false, fmt.Errorf("pki init: %w", err)
		}
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(abs)+".tmp-")
	if err != nil {
		return false, fmt.Errorf("pki init: %w", err)
	}
	defer os.RemoveAll(tmp)
	if err := build(tmp, hosts, cfg.Deployment); err != nil {
		return false, err
	}
	if err := os.Rename(tmp, abs); err != nil {
		return false, fmt.Errorf("pki init: %w", err)
	}
	return false, nil
}

// checkExisting accepts a complete PKI directory of the same hosts and
// deployment, and explains anything else.
func checkExisting(dir string, hosts []string, deployment string) error {
	if _, err := os.Stat(filepath.Join(dir, CAKeyFile)); err == nil {
		return fmt.Errorf("pki init: %s holds a PKI of the older single-directory layout (certificates without roles); move it away and run pki init again, then re-enrol the clients (their credentials change)", dir)
	}
	missing := 0
	var first string
	check := func(sub string, files []string) {
		for _, f := range files {
			if _, err := os.Stat(filepath.Join(dir, sub, f)); err != nil {
				if missing == 0 {
					first = filepath.Join(sub, f)
				}
				missing++
			}
		}
	}
	check(OperatorDir, operatorFiles)
	for _, r := range Roles {
		check(r, BundleFiles(r))
	}
	if missing > 0 {
		return fmt.Errorf("pki init: %s is not empty and not a complete PKI (%d files missing, e.g. %s); remove it or give another --dir", dir, missing, first)
	}
	ca, err := readCert(filepath.Join(dir, OperatorDir, CAFile))
	if err != nil {
		return err
	}
	d, err := deploymentOf(ca)
	if err != nil {
		return fmt.Errorf("pki init: %s: %w", dir, err)
	}
	if d != deployment {
		return fmt.Errorf("pki init: %s holds the PKI of deployment %q, --deployment asks for %q; give another --dir", dir, d, deployment)
	}
	want := slices.Sorted(slices.Values(hosts))
	for _, r := range []string{RoleServer, RoleShuffler} {
		c, err := readCert(filepath.Join(dir, r, CertFile(r)))
		if err != nil {
			return err
		}
		if have := certHosts(c.IPAddresses, c.DNSNames); !slices.Equal(have, want) {
			return fmt.Errorf("pki init: %s already holds a PKI whose %s certificate is for hosts [%s], --hosts asks for [%s]; nothing changed. To reissue the server's and the shuffler's certificates for the new hosts (keeping the authority and the client credentials) run `shuffledp pki rotate --dir %s --role server --hosts H1,H2` and the same with --role shuffler, then copy the bundles again",
				dir, r, strings.Join(have, ","), strings.Join(want, ","), dir)
		}
	}
	return nil
}

// build writes a fresh PKI into the empty directory dir.
func build(dir string, hosts []string, deployment string) error {
	for _, sub := range append([]string{OperatorDir}, Roles...) {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o700); err != nil {
			return fmt.Errorf("pki init: %w", err)
		}
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("pki: %w", err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "shuffledp CA of " + deployment, Organization: []string{"shuffledp"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(caValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
		URIs:                  []*url.URL{{Scheme: "spiffe", Host: deployment}},
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return fmt.Errorf("pki: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return fmt.Errorf("pki: %w", err)
	}
	for _, sub := range append([]string{OperatorDir}, Roles...) {
		if err := writeCert(filepath.Join(dir, sub, CAFile), caDER); err != nil {
			return err
		}
	}
	if err := writeKey(filepath.Join(dir, OperatorDir, CAKeyFile), caKey); err != nil {
		return err
	}
	for _, role := range Roles {
		var h []string
		if role != RoleClient {
			h = hosts
		}
		if err := issue(filepath.Join(dir, role), role, deployment, h, ca, caKey); err != nil {
			return err
		}
	}
	secret := make([]byte, secretSize)
	if _, err := rand.Read(secret); err != nil {
		return fmt.Errorf("pki: %w", err)
	}
	for _, sub := range []string{OperatorDir, RoleShuffler} {
		if err := writeSecret(filepath.Join(dir, sub, ClientsKeyFile), secret); err != nil {
			return err
		}
	}
	return nil
}

// issue generates role's key and certificate (its identity, its key
// usages, SANs for hosts) in dir, as new files.
func issue(dir, role, deployment string, hosts []string, ca *x509.Certificate, caKey *ecdsa.PrivateKey) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("pki: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "shuffledp " + role, Organization: []string{"shuffledp"}, OrganizationalUnit: []string{role}},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(leafValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  usageOf(role),
		URIs:         []*url.URL{Identity(deployment, role)},
	}
	if role != RoleClient {
		tmpl.IPAddresses, tmpl.DNSNames = sans(hosts)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return fmt.Errorf("pki: %s certificate: %w", role, err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return fmt.Errorf("pki: %w", err)
	}
	if err := writeFile(filepath.Join(dir, KeyFile(role)), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		return err
	}
	return writeFile(filepath.Join(dir, CertFile(role)), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
}

// RotateConfig configures Rotate.
type RotateConfig struct {
	// Role is the role whose key and certificate are replaced.
	Role string
	// Hosts, if SetHosts, replace the certificate's extra hosts (server and
	// shuffler only); otherwise the old certificate's are kept.
	Hosts    []string
	SetHosts bool
	// Revoke adds the replaced certificate's serial to the revocation
	// list (Revoke) once the new one is in place.
	Revoke bool
}

// Rotate replaces a role's private key and certificate in the PKI
// directory dir (made by InitWith; the authority's key in dir/operator
// signs the new certificate). The authority, the other roles' bundles, the
// client credentials, the server's HPKE key and every ledger are left as
// they are: copy the role's new bundle to its host and restart the role.
// It returns the new certificate.
//
// It is crash-safe: the new bundle (the old one's other files, the new key
// and certificate) is written and synced beside the old one and switched
// in with one atomic exchange of the two directories (switchBundle), so a
// crash at any point leaves dir/ROLE holding either the old pair or the
// new one, never a key of one and a certificate of the other; a leftover
// of a crashed rotation is removed by the next one.
func Rotate(dir string, cfg RotateConfig) (*x509.Certificate, error) {
	if !slices.Contains(Roles, cfg.Role) {
		return nil, fmt.Errorf("pki rotate: role must be one of %s, got %q", strings.Join(Roles, ", "), cfg.Role)
	}
	if cfg.SetHosts && cfg.Role == RoleClient {
		return nil, errors.New("pki rotate: hosts apply to the server's and the shuffler's certificates; the client certificate names no host")
	}
	op := filepath.Join(dir, OperatorDir)
	if _, err := os.Stat(filepath.Join(dir, CAKeyFile)); err == nil {
		return nil, fmt.Errorf("pki rotate: %s holds a PKI of the older single-directory layout (certificates without roles); run pki init in a new directory instead", dir)
	}
	ca, err := readCert(filepath.Join(op, CAFile))
	if err != nil {
		return nil, fmt.Errorf("pki rotate: %w (dir must be the directory pki init wrote, on the operator's machine)", err)
	}
	deployment, err := deploymentOf(ca)
	if err != nil {
		return nil, fmt.Errorf("pki rotate: %w", err)
	}
	caKey, err := readKey(filepath.Join(op, CAKeyFile))
	if err != nil {
		return nil, fmt.Errorf("pki rotate: %w", err)
	}
	bundle := filepath.Join(dir, cfg.Role)
	if err := recoverRotation(dir, cfg.Role); err != nil {
		return nil, fmt.Errorf("pki rotate: %w", err)
	}
	old, err := readCert(filepath.Join(bundle, CertFile(cfg.Role)))
	if err != nil {
		return nil, fmt.Errorf("pki rotate: %w", err)
	}
	hosts := certHosts(old.IPAddresses, old.DNSNames)
	if cfg.SetHosts {
		if hosts, err = ParseHosts(cfg.Hosts); err != nil {
			return nil, fmt.Errorf("pki rotate: %w", err)
		}
	}
	if err := rotateBundle(dir, cfg.Role, deployment, hosts, ca, caKey); err != nil {
		return nil, fmt.Errorf("pki rotate: %w", err)
	}
	if cfg.Revoke {
		if _, err := Revoke(dir, old.SerialNumber); err != nil {
			return nil, fmt.Errorf("%w (the new certificate is in place; revoke the old serial %s with pki revoke)", err, serialHex(old.SerialNumber))
		}
	}
	return readCert(filepath.Join(bundle, CertFile(cfg.Role)))
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

// readCert parses the first PEM certificate of path.
func readCert(path string) (*x509.Certificate, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("pki: %w", err)
	}
	blk, _ := pem.Decode(b)
	if blk == nil || blk.Type != "CERTIFICATE" {
		return nil, fmt.Errorf("pki: %s holds no PEM certificate", path)
	}
	c, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("pki: %s: %w", path, err)
	}
	return c, nil
}

// readKey reads an ECDSA private key (PKCS #8 PEM), refusing a file with
// group or other permissions.
func readKey(path string) (*ecdsa.PrivateKey, error) {
	if err := CheckPrivate(path); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("pki: %w", err)
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		return nil, fmt.Errorf("pki: %s holds no PEM key", path)
	}
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("pki: %s: %w", path, err)
	}
	ek, ok := k.(*ecdsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("pki: %s: not an ECDSA key", path)
	}
	return ek, nil
}

// CheckPrivate refuses a secret file (a private key, the client secret, a
// credentials file, the server's HPKE key) that its group or others may
// read or write, with an error naming the file and its mode.
func CheckPrivate(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("pki: %w", err)
	}
	if m := st.Mode().Perm(); m&0o077 != 0 {
		return fmt.Errorf("%s has mode %#o: a secret must not be accessible to group or others; chmod 600 %s", path, m, path)
	}
	return nil
}

// loadBundle loads role's bundle in dir: the authority (its deployment),
// the role's certificate and key. It refuses a directory that is not one
// host's bundle (the pki init directory itself, an older single-directory
// layout, or a bundle holding another role's secret), a key file with group
// or other permissions, and a certificate that does not name role.
func loadBundle(dir, role string) (tls.Certificate, *x509.CertPool, string, error) {
	var zero tls.Certificate
	if st, err := os.Stat(filepath.Join(dir, OperatorDir)); err == nil && st.IsDir() {
		return zero, nil, "", fmt.Errorf("pki: %s is the directory pki init wrote; give the %s its bundle %s", dir, role, filepath.Join(dir, role))
	}
	for _, f := range []string{CAKeyFile, ClientsKeyFile, KeyFile(RoleServer), KeyFile(RoleShuffler), KeyFile(RoleClient)} {
		if f == KeyFile(role) || (f == ClientsKeyFile && role == RoleShuffler) {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			if f == CAKeyFile && role != RoleClient && fileExists(filepath.Join(dir, KeyFile(RoleServer))) && fileExists(filepath.Join(dir, KeyFile(RoleShuffler))) {
				return zero, nil, "", fmt.Errorf("pki: %s holds a PKI of the older single-directory layout (certificates without roles, every secret on one host); run `shuffledp pki init --dir NEWDIR` on the operator's machine and give each host only its bundle", dir)
			}
			return zero, nil, "", fmt.Errorf("pki: the %s's bundle %s also holds %s, a secret of another role; a host keeps only its own bundle (pki init DIR/%s)", role, dir, f, role)
		}
	}
	caPath := filepath.Join(dir, CAFile)
	ca, err := readCert(caPath)
	if err != nil {
		return zero, nil, "", err
	}
	deployment, err := deploymentOf(ca)
	if err != nil {
		return zero, nil, "", fmt.Errorf("pki: %s: %w", caPath, err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	kp := filepath.Join(dir, KeyFile(role))
	if err := CheckPrivate(kp); err != nil {
		return zero, nil, "", err
	}
	cp := filepath.Join(dir, CertFile(role))
	c, err := tls.LoadX509KeyPair(cp, kp)
	if err != nil && strings.Contains(err.Error(), "does not match") {
		return zero, nil, "", fmt.Errorf("pki: %s and %s do not belong together: the private key is not the certificate's (%w); the bundle mixes two rotations (copy the role's whole bundle again from the operator's machine)", kp, cp, err)
	}
	if err != nil {
		return zero, nil, "", fmt.Errorf("pki: %s: %w", role, err)
	}
	got, err := RoleOf(c.Leaf, deployment)
	if err != nil {
		return zero, nil, "", fmt.Errorf("pki: %s: %w", cp, err)
	}
	if err := checkValidity(cp, role, c.Leaf, time.Now()); err != nil {
		return zero, nil, "", err
	}
	rp := filepath.Join(dir, RevokedFile)
	revoked, err := readRevoked(rp)
	if err != nil {
		return zero, nil, "", err
	}
	if revoked[serialHex(c.Leaf.SerialNumber)] {
		return zero, nil, "", fmt.Errorf("pki: %s: the %s's own certificate (serial %s) is revoked (%s); rotate it on the operator's machine (shuffledp pki rotate --role %s) and copy the bundle again",
			cp, role, serialHex(c.Leaf.SerialNumber), rp, role)
	}
	revocations.Store(pool, revoked)
	if got != role {
		return zero, nil, "", fmt.Errorf("pki: %s is the %s's certificate, not the %s's", cp, got, role)
	}
	return c, pool, deployment, nil
}

// checkValidity refuses role's own certificate (the file path) when it is
// expired or not yet valid at now: every peer would refuse it, so the role
// would only wait. The error names the file and gives the dates.
func checkValidity(path, role string, c *x509.Certificate, now time.Time) error {
	var what string
	switch {
	case now.Before(c.NotBefore):
		what = "is not yet valid"
	case now.After(c.NotAfter):
		what = "has expired"
	default:
		return nil
	}
	return fmt.Errorf("pki: %s: the %s's own certificate %s: valid from %s to %s, now %s; issue a new one on the operator's machine (shuffledp pki rotate --role %s) and copy the bundle again",
		path, role, what, c.NotBefore.UTC().Format(time.RFC3339), c.NotAfter.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339), role)
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// LoadKeyPair loads a role's certificate and key from its bundle dir (see
// loadBundle for what is refused).
func LoadKeyPair(dir, role string) (tls.Certificate, error) {
	c, _, _, err := loadBundle(dir, role)
	return c, err
}
