package pki

import (
	"crypto/ecdsa"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/shuffledp/shuffledp/internal/faultpoint"
)

// Points of Rotate at which the crash tests kill the process
// (internal/faultpoint).
const (
	// PointRotateBuilt: the new bundle is complete beside the old one,
	// not yet switched in.
	PointRotateBuilt = "pki.rotate.built"
	// PointRotateHalfSwitched: (only where directories cannot be exchanged
	// atomically) the old bundle was moved aside, the new one not yet
	// moved in.
	PointRotateHalfSwitched = "pki.rotate.half-switched"
	// PointRotateSwitched: the new bundle is in place, the old one not yet
	// removed.
	PointRotateSwitched = "pki.rotate.switched"
)

// rotationPrefix names the directory a rotation of role builds its new
// bundle in (beside the bundle, in the pki init directory), and oldPrefix
// the one the old bundle is moved to where directories cannot be
// exchanged.
func rotationPrefix(role string) string { return "." + role + ".rotate-" }
func oldPrefix(role string) string      { return "." + role + ".old-" }

// rotateBundle writes role's new bundle beside dir/role (its other files
// copied, a new key and certificate issued), syncs it and switches it in.
func rotateBundle(dir, role, deployment string, hosts []string, ca *x509.Certificate, caKey *ecdsa.PrivateKey) error {
	bundle := filepath.Join(dir, role)
	st, err := os.Stat(bundle)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(dir, rotationPrefix(role))
	if err != nil {
		return err
	}
	keep := false
	defer func() {
		if !keep {
			os.RemoveAll(tmp)
		}
	}()
	if err := os.Chmod(tmp, st.Mode().Perm()); err != nil {
		return err
	}
	entries, err := os.ReadDir(bundle)
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		if name == CertFile(role) || name == KeyFile(role) {
			continue
		}
		if !e.Type().IsRegular() {
			return fmt.Errorf("%s: the bundle holds %s, not a regular file; rotate copies only files", bundle, name)
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		b, err := os.ReadFile(filepath.Join(bundle, name))
		if err != nil {
			return err
		}
		if err := writeFile(filepath.Join(tmp, name), b, info.Mode().Perm()); err != nil {
			return err
		}
	}
	if err := issue(tmp, role, deployment, hosts, ca, caKey); err != nil {
		return err
	}
	if err := syncDir(tmp); err != nil {
		return err
	}
	faultpoint.Hit(PointRotateBuilt)
	keep = true // from here on, a failure leaves it for recoverRotation
	if err := switchBundle(dir, role, tmp, bundle); err != nil {
		return err
	}
	faultpoint.Hit(PointRotateSwitched)
	return os.RemoveAll(tmp) // the old bundle, exchanged into tmp's place
}

// switchBundle puts the complete bundle at tmp in bundle's place: one
// atomic exchange of the two directories where the system has one (Linux
// renameat2 RENAME_EXCHANGE; the old bundle is then at tmp), else the old
// bundle is renamed aside and tmp renamed into place, a crash between the
// two leaving no bundle, which recoverRotation completes.
func switchBundle(dir, role, tmp, bundle string) error {
	err := exchangeDirs(tmp, bundle)
	if err == nil {
		return syncDir(dir)
	}
	if !errors.Is(err, errNoExchange) {
		return err
	}
	aside, err := os.MkdirTemp(dir, oldPrefix(role))
	if err != nil {
		return err
	}
	if err := os.Remove(aside); err != nil {
		return err
	}
	if err := os.Rename(bundle, aside); err != nil {
		return err
	}
	faultpoint.Hit(PointRotateHalfSwitched)
	if err := os.Rename(tmp, bundle); err != nil {
		return err
	}
	if err := syncDir(dir); err != nil {
		return err
	}
	return os.Rename(aside, tmp) // removed by the caller, like an exchanged one
}

// recoverRotation finishes or discards what a crashed rotation of role
// left in dir: with the bundle in place, any leftover is removed (a new
// bundle not switched in, or an old one switched out); with no bundle (a
// crash between the two renames of switchBundle's fallback), the complete
// new bundle is moved in.
func recoverRotation(dir, role string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var rotated, old []string
	for _, e := range entries {
		switch name := e.Name(); {
		case strings.HasPrefix(name, rotationPrefix(role)):
			rotated = append(rotated, filepath.Join(dir, name))
		case strings.HasPrefix(name, oldPrefix(role)):
			old = append(old, filepath.Join(dir, name))
		}
	}
	bundle := filepath.Join(dir, role)
	if _, err := os.Stat(bundle); errors.Is(err, os.ErrNotExist) {
		if len(rotated) != 1 || len(old) != 1 {
			return fmt.Errorf("%s is missing and no single interrupted rotation can restore it (found %d new and %d old bundles beside it)", bundle, len(rotated), len(old))
		}
		if _, err := LoadKeyPair(rotated[0], role); err != nil {
			return fmt.Errorf("%s is missing and the interrupted rotation's new bundle %s does not load: %w", bundle, rotated[0], err)
		}
		if err := os.Rename(rotated[0], bundle); err != nil {
			return err
		}
		rotated = nil
	}
	for _, p := range append(rotated, old...) {
		if err := os.RemoveAll(p); err != nil {
			return err
		}
	}
	return nil
}

// syncDir makes dir's entries durable.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
