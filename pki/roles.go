package pki

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// Roles that hold a certificate. Each certificate names exactly one, as
// its identity: the URI subject alternative name spiffe://DEPLOYMENT/ROLE
// (a SPIFFE ID; DEPLOYMENT is the trust domain, also named by the
// authority's own certificate). Clients share one client certificate per
// deployment: it proves "a client of this deployment", never which client
// (that is the credential's job, checked by the shuffler).
const (
	RoleServer   = "server"
	RoleShuffler = "shuffler"
	RoleClient   = "client"
)

// Roles lists the roles, in a fixed order.
var Roles = []string{RoleServer, RoleShuffler, RoleClient}

// DefaultDeployment is the trust domain pki init names when none is given.
const DefaultDeployment = "shuffledp"

var trustDomainRE = regexp.MustCompile(`^[a-z0-9._-]{1,255}$`)

// checkDeployment checks a trust domain name (SPIFFE: lower-case letters,
// digits, dots, hyphens and underscores).
func checkDeployment(d string) error {
	if !trustDomainRE.MatchString(d) {
		return fmt.Errorf("deployment %q: a name of lower-case letters, digits, '.', '-' and '_' (at most 255)", d)
	}
	return nil
}

// Identity is the URI a role's certificate carries in the deployment.
func Identity(deployment, role string) *url.URL {
	return &url.URL{Scheme: "spiffe", Host: deployment, Path: "/" + role}
}

// ErrNoRole is wrapped by the errors about a certificate that names no role
// (one issued before certificates were bound to roles).
var ErrNoRole = errors.New("certificate names no role")

// errOld is the advice an error about an old certificate ends with.
const errOld = "it was issued by an older shuffledp, before certificates were bound to roles: run `shuffledp pki init --dir NEWDIR` on the operator's machine and copy each host its bundle (or `shuffledp pki rotate --role ROLE` if the authority already names a deployment)"

// RoleError is a peer whose certificate (valid, issued by the deployment's
// authority) is for another role than the ones expected.
type RoleError struct {
	// Want are the roles accepted; Got the role the peer presented, and
	// ID its identity.
	Want []string
	Got  string
	ID   string
}

func (e *RoleError) Error() string {
	return fmt.Sprintf("peer identity: expected role %s, the peer presented role %s (%s)", strings.Join(e.Want, " or "), e.Got, e.ID)
}

// deploymentOf returns the trust domain the authority's certificate names.
func deploymentOf(ca *x509.Certificate) (string, error) {
	for _, u := range ca.URIs {
		if u.Scheme == "spiffe" && (u.Path == "" || u.Path == "/") && checkDeployment(u.Host) == nil {
			return u.Host, nil
		}
	}
	return "", fmt.Errorf("the authority %q names no deployment (%w): %s", ca.Subject.CommonName, ErrNoRole, errOld)
}

// RoleOf returns the role a certificate of the deployment names: exactly
// one spiffe URI, of the deployment, with a known role as its path.
func RoleOf(c *x509.Certificate, deployment string) (string, error) {
	var ids []*url.URL
	for _, u := range c.URIs {
		if u.Scheme == "spiffe" {
			ids = append(ids, u)
		}
	}
	switch {
	case len(ids) == 0:
		return "", fmt.Errorf("certificate %q (serial %x): %w; %s", c.Subject.CommonName, c.SerialNumber, ErrNoRole, errOld)
	case len(ids) > 1:
		return "", fmt.Errorf("certificate %q (serial %x) names %d identities; a certificate is for one role", c.Subject.CommonName, c.SerialNumber, len(ids))
	}
	u := ids[0]
	if u.Host != deployment {
		return "", fmt.Errorf("certificate %s is of deployment %q, this one is %q", u, u.Host, deployment)
	}
	role := strings.TrimPrefix(u.Path, "/")
	if !slices.Contains(Roles, role) || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", fmt.Errorf("certificate %s names no known role (%s)", u, strings.Join(Roles, ", "))
	}
	return role, nil
}

// usageOf is the extended key usage a role's certificate carries: the
// server and the shuffler listen (server authentication), the shuffler and
// the clients dial with a certificate (client authentication).
func usageOf(role string) []x509.ExtKeyUsage {
	switch role {
	case RoleServer:
		return []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	case RoleShuffler:
		return []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	}
	return []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
}

// verifier checks a peer's certificate chain against the deployment's
// authority, then its role, then the key usage of its side of the
// connection, then (dialling) the host name. The role comes before the
// host name and key usage, so that a valid certificate of another role is
// reported as such (naming the expected and the presented role) rather
// than as a name or usage mismatch.
type verifier struct {
	pool  *x509.CertPool
	want  []string
	usage x509.ExtKeyUsage // the peer's side: server or client auth
	// host is the host name or IP address dialled ("": the connection's
	// server name, which TLS leaves empty for an IP address).
	host string
}

func (v *verifier) verify(cs tls.ConnectionState) error {
	want := strings.Join(v.want, " or ")
	if len(cs.PeerCertificates) == 0 {
		return fmt.Errorf("peer identity: expected role %s, the peer presented no certificate", want)
	}
	leaf := cs.PeerCertificates[0]
	inter := x509.NewCertPool()
	for _, c := range cs.PeerCertificates[1:] {
		inter.AddCert(c)
	}
	chains, err := leaf.Verify(x509.VerifyOptions{Roots: v.pool, Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}})
	if err != nil {
		return fmt.Errorf("peer identity (expected role %s): %w", want, err)
	}
	if revokedFor(v.pool)[serialHex(leaf.SerialNumber)] {
		return &RevokedError{Role: PeerRole(cs), Subject: leaf.Subject.String(), Serial: serialHex(leaf.SerialNumber)}
	}
	chain := chains[0]
	deployment, err := deploymentOf(chain[len(chain)-1]) // the trusted authority
	if err != nil {
		return fmt.Errorf("peer identity (expected role %s): %w", want, err)
	}
	role, err := RoleOf(leaf, deployment)
	if err != nil {
		return fmt.Errorf("peer identity (expected role %s): %w", want, err)
	}
	if !slices.Contains(v.want, role) {
		return &RoleError{Want: v.want, Got: role, ID: Identity(deployment, role).String()}
	}
	if !slices.Contains(leaf.ExtKeyUsage, v.usage) {
		return fmt.Errorf("peer identity: the %s certificate lacks the key usage of its side of the connection", role)
	}
	if v.usage == x509.ExtKeyUsageServerAuth {
		host := v.host
		if host == "" {
			host = cs.ServerName
		}
		if host == "" {
			return fmt.Errorf("peer identity: no host name to verify the %s's certificate against (dial an IP address through pki.RequirePeer)", role)
		}
		if err := leaf.VerifyHostname(host); err != nil {
			return fmt.Errorf("peer identity (role %s): %w", role, err)
		}
	}
	return nil
}

// PeerRole returns the role the peer of a connection made with ServerTLS
// or ClientTLS presented. The handshake already verified the chain and
// refused any role the configuration does not accept, so this only reads
// the role back (for a per-call check among the accepted ones); it is
// empty when the peer presented no certificate.
func PeerRole(cs tls.ConnectionState) string {
	if len(cs.PeerCertificates) == 0 {
		return ""
	}
	for _, u := range cs.PeerCertificates[0].URIs {
		if u.Scheme == "spiffe" {
			if r := strings.TrimPrefix(u.Path, "/"); slices.Contains(Roles, r) {
				return r
			}
		}
	}
	return ""
}
