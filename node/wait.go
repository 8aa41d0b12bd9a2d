package node

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/shuffledp/shuffledp/pki"
)

// DefaultConnectTimeout bounds every wait of a role for a peer: for the
// server (the shuffler and the clients) and the shuffler (the clients) to
// answer at start, and for it to come back after it went away mid-run.
const DefaultConnectTimeout = time.Minute

// probeTimeout bounds one connection attempt of waitReachable.
const probeTimeout = 5 * time.Second

// PeerError is the error of a wait for a peer that did not answer in time,
// or that answered with a certificate the role refuses: it names the peer
// (what was waited for and its address) and the cause.
type PeerError struct {
	// Peer names the peer ("the server", "the shuffler"); Addr is the
	// address dialled.
	Peer, Addr string
	// Waited is how long the role waited (0: it gave up at once, the
	// cause being one that waiting does not cure, such as a certificate
	// from another authority).
	Waited time.Duration
	// Err is the last cause.
	Err error
}

func (e *PeerError) Error() string {
	if e.Waited > 0 {
		return fmt.Sprintf("%s at %s did not answer within %v (--connect-timeout): %v", e.Peer, e.Addr, e.Waited.Round(time.Millisecond), e.Err)
	}
	return fmt.Sprintf("%s at %s: %v", e.Peer, e.Addr, e.Err)
}

func (e *PeerError) Unwrap() error { return e.Err }

// waitReachable waits up to timeout (and while ctx lives) until the peer of
// role at addr
// completes a TLS handshake under tc (the same configuration the gRPC
// connection uses), retrying refused connections and unresolvable names
// with a short backoff. A certificate the role refuses (another CA, expired
// or not yet valid, not issued for addr's host, refused by the peer) ends
// the wait at once: waiting would not cure it. The error is a *PeerError
// naming peer, address and cause.
func waitReachable(ctx context.Context, role, addr string, tc *tls.Config, timeout time.Duration) error {
	peer := "the " + role
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return &PeerError{Peer: peer, Addr: addr, Err: fmt.Errorf("not a host:port address: %w", err)}
	}
	// The connection's own check: the deployment's authority, the role,
	// the host (pki.RequirePeer, as dial uses); a configuration not made by
	// pki.ClientTLS is used as it is.
	conf, err := pki.RequirePeer(tc, role, host)
	if err != nil {
		conf = tc.Clone()
	}
	if conf.ServerName == "" {
		conf.ServerName = host
	}
	conf.NextProtos = []string{"h2"} // as gRPC offers: a server may insist
	start := time.Now()
	deadline := start.Add(timeout)
	backoff := 50 * time.Millisecond
	var cause error
	for {
		attempt := min(probeTimeout, time.Until(deadline))
		if attempt <= 0 {
			attempt = time.Millisecond
		}
		d := tls.Dialer{NetDialer: &net.Dialer{Timeout: attempt}, Config: conf}
		actx, cancel := context.WithTimeout(ctx, attempt)
		c, err := d.DialContext(actx, "tcp", addr)
		cancel()
		if err == nil {
			c.Close()
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		explained, final := explainDialError(host, err)
		if final {
			return &PeerError{Peer: peer, Addr: addr, Err: explained}
		}
		// An attempt cut short by the deadline says less than what an
		// earlier attempt found (connection refused, no such host).
		var ne net.Error
		if cause == nil || !(errors.As(err, &ne) && ne.Timeout()) {
			cause = explained
		}
		wait := min(backoff, time.Until(deadline))
		if wait <= 0 {
			return &PeerError{Peer: peer, Addr: addr, Waited: time.Since(start), Err: cause}
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return ctx.Err()
		}
		backoff = min(2*backoff, time.Second)
	}
}

// explainDialError turns a failed connection attempt into a cause a user
// can act on, and reports whether it is final (a certificate problem that
// waiting does not cure) rather than one worth retrying (nothing listening
// yet, a name not resolving yet, a timeout).
func explainDialError(host string, err error) (error, bool) {
	var (
		dnsErr     *net.DNSError
		unknownCA  x509.UnknownAuthorityError
		invalid    x509.CertificateInvalidError
		hostErr    x509.HostnameError
		alert      tls.AlertError
		recordErr  tls.RecordHeaderError
		verifyErr  *tls.CertificateVerificationError
		roleErr    *pki.RoleError
		revokedErr *pki.RevokedError
		peerCertTo string
	)
	if errors.As(err, &verifyErr) && len(verifyErr.UnverifiedCertificates) > 0 {
		c := verifyErr.UnverifiedCertificates[0]
		peerCertTo = fmt.Sprintf(" (its certificate: subject %q, issuer %q)", c.Subject.String(), c.Issuer.String())
	} else if errors.As(err, &unknownCA) && unknownCA.Cert != nil {
		c := unknownCA.Cert
		peerCertTo = fmt.Sprintf(" (its certificate: subject %q, issuer %q)", c.Subject.String(), c.Issuer.String())
	}
	switch {
	case errors.As(err, &dnsErr):
		return fmt.Errorf("cannot resolve host %q: %w", dnsErr.Name, err), false
	case errors.As(err, &unknownCA):
		return fmt.Errorf("its certificate is not signed by this deployment's CA (ca.pem): a certificate from another CA%s: %w", peerCertTo, err), true
	case errors.As(err, &invalid) && invalid.Reason == x509.Expired && invalid.Cert != nil:
		c, now := invalid.Cert, time.Now().UTC()
		what := "has expired"
		if now.Before(c.NotBefore) {
			what = "is not yet valid"
		}
		return fmt.Errorf("its certificate (subject %q) %s: valid from %s to %s, now %s: %w", c.Subject.String(), what,
			c.NotBefore.UTC().Format(time.RFC3339), c.NotAfter.UTC().Format(time.RFC3339), now.Format(time.RFC3339), err), true
	case errors.As(err, &invalid):
		return fmt.Errorf("its certificate is refused%s: %w", peerCertTo, err), true
	case errors.As(err, &hostErr):
		return fmt.Errorf("its certificate is not valid for host %q (re-run pki init with --hosts naming it): %w", host, err), true
	case errors.As(err, &recordErr):
		return fmt.Errorf("it does not speak TLS (another service at this address?): %w", err), true
	case errors.As(err, &revokedErr):
		return fmt.Errorf("its certificate is revoked: %w", err), true
	case errors.As(err, &roleErr):
		return fmt.Errorf("it presents another role's certificate: %w", err), true
	case errors.As(err, &alert):
		return fmt.Errorf("it refused this role's TLS handshake: %w", err), true
	case verifyErr != nil:
		return fmt.Errorf("its certificate is refused%s: %w", peerCertTo, err), true
	case strings.Contains(err.Error(), "connection refused"):
		return fmt.Errorf("nothing listens there (connection refused)"), false
	}
	return err, false
}

// CheckOwnCertificates refuses to start a role on its own certificate (tc's
// Certificates) when that is expired or not yet valid at now: every peer
// would refuse it, so the role would only wait. The error gives the
// certificate's dates.
func CheckOwnCertificates(role string, tc *tls.Config, now time.Time) error {
	if tc == nil {
		return nil
	}
	for _, c := range tc.Certificates {
		leaf := c.Leaf
		if leaf == nil && len(c.Certificate) > 0 {
			var err error
			if leaf, err = x509.ParseCertificate(c.Certificate[0]); err != nil {
				return fmt.Errorf("%s: its own certificate: %w", role, err)
			}
		}
		if leaf == nil {
			continue
		}
		var what string
		switch {
		case now.Before(leaf.NotBefore):
			what = "is not yet valid"
		case now.After(leaf.NotAfter):
			what = "has expired"
		default:
			continue
		}
		return fmt.Errorf("%s: its own certificate (subject %q) %s: valid from %s to %s, now %s; issue a new one before starting it",
			role, leaf.Subject.String(), what, leaf.NotBefore.UTC().Format(time.RFC3339), leaf.NotAfter.UTC().Format(time.RFC3339),
			now.UTC().Format(time.RFC3339))
	}
	return nil
}
