package pki

import (
	"crypto/tls"
	"crypto/x509"
	"path/filepath"
	"slices"
)

// ServerTLS is the TLS configuration of a role listening for connections
// (TLS 1.3 only) with its certificate from dir. Client certificates signed
// by the authority are verified when presented (the shuffler presents one
// to the server; clients present none and authenticate with their
// credential instead); IsShuffler tells them apart.
func ServerTLS(dir, role string) (*tls.Config, error) {
	cert, err := LoadKeyPair(dir, role)
	if err != nil {
		return nil, err
	}
	pool, err := CertPool(filepath.Join(dir, CAFile))
	if err != nil {
		return nil, err
	}
	return &tls.Config{
		MinVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{cert},
		ClientCAs:    pool,
		ClientAuth:   tls.VerifyClientCertIfGiven,
	}, nil
}

// ClientTLS is the TLS configuration of a connection to a role, trusting
// only the authority in caFile. A non-empty role of dir (the shuffler
// dialling the server) adds that role's certificate as client certificate.
func ClientTLS(caFile, dir, role string) (*tls.Config, error) {
	pool, err := CertPool(caFile)
	if err != nil {
		return nil, err
	}
	c := &tls.Config{MinVersion: tls.VersionTLS13, RootCAs: pool}
	if role != "" {
		cert, err := LoadKeyPair(dir, role)
		if err != nil {
			return nil, err
		}
		c.Certificates = []tls.Certificate{cert}
	}
	return c, nil
}

// IsShuffler reports whether the verified chains of a TLS connection hold
// the shuffler's certificate (organizational unit "shuffler", client
// authentication), as ServerTLS verified it against the authority.
func IsShuffler(cs tls.ConnectionState) bool {
	for _, chain := range cs.VerifiedChains {
		if len(chain) == 0 {
			continue
		}
		leaf := chain[0]
		if slices.Contains(leaf.Subject.OrganizationalUnit, RoleShuffler) && slices.Contains(leaf.ExtKeyUsage, x509.ExtKeyUsageClientAuth) {
			return true
		}
	}
	return false
}
