package pki

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Callers lists, for each role that listens, the roles whose certificates
// its listener accepts: the server is called by the shuffler (model,
// batches, stop) and by clients (the public run specification only; the
// server's per-call check keeps them there); the shuffler is called by
// clients only. Any other peer, and a peer without a certificate, fails
// the TLS handshake.
var Callers = map[string][]string{
	RoleServer:   {RoleShuffler, RoleClient},
	RoleShuffler: {RoleClient},
}

// Callees lists, for each role that dials, the roles it dials.
var Callees = map[string][]string{
	RoleShuffler: {RoleServer},
	RoleClient:   {RoleServer, RoleShuffler},
}

// ServerTLS is the TLS configuration (TLS 1.3 only) of role listening with
// its bundle dir. The peer must present a certificate of the deployment's
// authority naming one of the roles Callers[role]; the check runs inside
// the handshake (VerifyConnection), so any other peer never completes one
// and never sends a byte of a message.
func ServerTLS(dir, role string) (*tls.Config, error) {
	callers, ok := Callers[role]
	if !ok {
		return nil, fmt.Errorf("pki: the %s does not listen", role)
	}
	cert, pool, _, err := loadBundle(dir, role)
	if err != nil {
		return nil, err
	}
	v := &verifier{pool: pool, want: callers, usage: x509.ExtKeyUsageClientAuth}
	return &tls.Config{
		MinVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{cert},
		ClientCAs:    pool,
		// The certificate is requested, and required and verified by
		// VerifyConnection (the chain against ClientCAs, then the role), so
		// that a missing certificate or a valid one of another role is
		// refused naming the expected role and the presented one.
		ClientAuth:       tls.RequestClientCert,
		VerifyConnection: v.verify,
	}, nil
}

// ClientTLS is the TLS configuration (TLS 1.3 only) of role dialling with
// its bundle dir: it presents role's certificate and accepts a peer whose
// certificate the deployment's authority issued for one of peers (all of
// Callees[role] when none is given) and for the host name dialled. Narrow
// it to the one role a connection is for with RequirePeer.
func ClientTLS(dir, role string, peers ...string) (*tls.Config, error) {
	callees, ok := Callees[role]
	if !ok {
		return nil, fmt.Errorf("pki: the %s does not dial", role)
	}
	for _, p := range peers {
		if !slices.Contains(callees, p) {
			return nil, fmt.Errorf("pki: the %s dials %s, not the %s", role, strings.Join(callees, " and "), p)
		}
	}
	if len(peers) == 0 {
		peers = callees
	}
	cert, pool, _, err := loadBundle(dir, role)
	if err != nil {
		return nil, err
	}
	v := &verifier{pool: pool, want: peers, usage: x509.ExtKeyUsageServerAuth}
	return &tls.Config{
		MinVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{cert},
		RootCAs:      pool,
		// Verification is VerifyConnection's: the chain against RootCAs,
		// the role, then the host name (tls.Config's own check would
		// report a valid certificate of another role as a name mismatch).
		InsecureSkipVerify: true,
		VerifyConnection:   v.verify,
	}, nil
}

// RequirePeer returns a copy of a configuration made by ClientTLS for a
// connection to host (the host name or IP address dialled; "": the
// configuration's ServerName) that accepts only a peer of role.
func RequirePeer(tc *tls.Config, role, host string) (*tls.Config, error) {
	if tc == nil || tc.VerifyConnection == nil || tc.RootCAs == nil || !tc.InsecureSkipVerify {
		return nil, errors.New("pki: a TLS configuration that verifies peer roles is required (pki.ClientTLS)")
	}
	c := tc.Clone()
	c.VerifyConnection = (&verifier{pool: tc.RootCAs, want: []string{role}, usage: x509.ExtKeyUsageServerAuth, host: host}).verify
	return c, nil
}

// VerifiesRoles reports whether a listener's configuration checks its
// peers' roles inside the handshake (one made by ServerTLS).
func VerifiesRoles(tc *tls.Config) bool {
	return tc != nil && tc.VerifyConnection != nil && tc.ClientAuth == tls.RequestClientCert && tc.ClientCAs != nil
}
