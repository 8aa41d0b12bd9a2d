package pki

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
)

// The questions of the `shuffledp pki` subcommands, their flags in the
// struct tags (bound by cliflag.Bind); each Run checks its request (errors
// name the flags), does the work and writes what it did, and what the
// operator does next, to w.

// InitRequest is `pki init`: InitWith on Dir.
type InitRequest struct {
	Dir        string `flag:"dir" metavar:"DIR" usage:"the PKI DIR to create (its parent must exist)"`
	Hosts      string `flag:"hosts" usage:"extra host names or IP addresses of the server's and the shuffler's certificates, comma separated"`
	Deployment string `flag:"deployment" default:"shuffledp" metavar:"NAME" usage:"the deployment's NAME (the trust domain of spiffe://NAME/ROLE)"`
}

// splitHosts splits a --hosts value ("" is none; every entry is checked
// by ParseHosts, an empty one included).
func splitHosts(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// Run creates (or keeps) the PKI and says where each bundle goes.
func (q InitRequest) Run(w io.Writer) error {
	if q.Dir == "" {
		return errors.New("dir is required: the directory to create (on the operator's trusted machine)")
	}
	kept, err := InitWith(q.Dir, InitConfig{Hosts: splitHosts(q.Hosts), Deployment: q.Deployment})
	if err != nil {
		return err
	}
	if kept {
		fmt.Fprintf(w, "pki in %s kept (complete, same hosts)\n", q.Dir)
		return nil
	}
	fmt.Fprintf(w, "pki in %s: copy %s to the server's host, %s to the shuffler's, %s to each client host; %s stays here\n",
		q.Dir, filepath.Join(q.Dir, RoleServer), filepath.Join(q.Dir, RoleShuffler), filepath.Join(q.Dir, RoleClient), filepath.Join(q.Dir, OperatorDir))
	return nil
}

// EnrolRequest is `pki enrol`: the credentials of clients LO..HI-1
// written to Out.
type EnrolRequest struct {
	Dir     string `flag:"dir" metavar:"DIR" usage:"the PKI DIR (pki init's directory, or the shuffler's bundle)"`
	Clients string `flag:"clients" metavar:"LO:HI" usage:"the clients LO:HI"`
	Out     string `flag:"out" metavar:"FILE" usage:"the credentials FILE to write (0600, never overwritten)"`
}

// Run issues the credentials (Enroller.Enrol) into q.Out
// (WriteCredentials), at most MaxEnrol per file.
func (q EnrolRequest) Run(w io.Writer) error {
	if q.Dir == "" || q.Out == "" {
		return errors.New("dir and out are required")
	}
	lo, hi, err := ParseRange("clients", q.Clients)
	if err != nil {
		return err
	}
	if hi-lo > MaxEnrol {
		return fmt.Errorf("clients %d:%d: %d clients, at most %d per credentials file; enrol the range in several files", lo, hi, hi-lo, MaxEnrol)
	}
	e, err := LoadEnroller(q.Dir)
	if err != nil {
		return err
	}
	c, err := e.Enrol(lo, hi)
	if err != nil {
		return err
	}
	if err := WriteCredentials(q.Out, c); err != nil {
		return err
	}
	fmt.Fprintf(w, "enrolled clients %d..%d (%d credentials) in %s\n", lo, hi-1, hi-lo, q.Out)
	return nil
}

// RotateRequest is `pki rotate`: Rotate of one role.
type RotateRequest struct {
	Dir    string `flag:"dir" metavar:"DIR" usage:"the DIR pki init wrote (with operator/ca.key)"`
	Role   string `flag:"role" metavar:"ROLE" usage:"the ROLE to rotate: server, shuffler or client"`
	Hosts  string `flag:"hosts" usage:"new extra host names or IP addresses (server and shuffler only), comma separated"`
	Revoke bool   `flag:"revoke" usage:"also revoke the replaced certificate (pki revoke)"`
}

// Run rotates the role's key and certificate, replacing its extra hosts
// when setHosts (--hosts given), and says what to copy where.
func (q RotateRequest) Run(w io.Writer, setHosts bool) error {
	if q.Dir == "" || q.Role == "" {
		return errors.New("dir and role are required")
	}
	c, err := Rotate(q.Dir, RotateConfig{Role: q.Role, Hosts: splitHosts(q.Hosts), SetHosts: setHosts, Revoke: q.Revoke})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "rotated the %s's key and certificate (serial %x, valid until %s) in %s; copy it to the %s's host and restart the %s\n",
		q.Role, c.SerialNumber, c.NotAfter.UTC().Format("2006-01-02"), filepath.Join(q.Dir, q.Role), q.Role, q.Role)
	if q.Revoke {
		fmt.Fprintf(w, "revoked the replaced certificate (%s in every bundle); copy every bundle to its host\n", RevokedFile)
	}
	return nil
}

// RevokeRequest is `pki revoke`: Revoke of a serial number.
type RevokeRequest struct {
	Dir    string `flag:"dir" metavar:"DIR" usage:"the DIR pki init wrote (with operator/ca.key)"`
	Serial string `flag:"serial" usage:"the certificate's serial number, hexadecimal"`
}

// Run revokes the serial (ParseSerial, Revoke) and says what to copy.
func (q RevokeRequest) Run(w io.Writer) error {
	if q.Dir == "" || q.Serial == "" {
		return errors.New("dir and serial are required")
	}
	n, err := ParseSerial(q.Serial)
	if err != nil {
		return err
	}
	already, err := Revoke(q.Dir, n)
	if err != nil {
		return err
	}
	what := "revoked"
	if already {
		what = "already revoked"
	}
	fmt.Fprintf(w, "%s serial %x (%s in every bundle of %s); copy every bundle to its host and restart the roles\n", what, n, RevokedFile, q.Dir)
	return nil
}
