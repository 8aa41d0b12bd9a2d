package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/shuffledp/shuffledp/pki"
)

func init() { rootCmd.AddCommand(newPKICmd()) }

// splitHosts splits a --hosts value ("" is none; every entry is checked
// by pki.ParseHosts, an empty one included).
func splitHosts(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

func newPKICmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pki",
		Short: "Create a networked deployment's certificates and client credentials",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newPKIInitCmd(), newPKIEnrolCmd(), newPKIRotateCmd(), newPKIRevokeCmd())
	return cmd
}

// newPKIInitCmd is pki init.
func newPKIInitCmd() *cobra.Command {
	var dir, hosts, deployment string
	initCmd := &cobra.Command{
		Use:   "init --dir DIR [--hosts H1,H2] [--deployment NAME]",
		Short: "Create the deployment's authority, one certificate per role and the client-credential secret, as one bundle per host",
		Long:  longHelp("pki_init"),
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dir == "" {
				return errors.New("dir is required: the directory to create (on the operator's trusted machine)")
			}
			kept, err := pki.InitWith(dir, pki.InitConfig{Hosts: splitHosts(hosts), Deployment: deployment})
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if kept {
				fmt.Fprintf(out, "pki in %s kept (complete, same hosts)\n", dir)
				return nil
			}
			fmt.Fprintf(out, "pki in %s: copy %s to the server's host, %s to the shuffler's, %s to each client host; %s stays here\n",
				dir, filepath.Join(dir, pki.RoleServer), filepath.Join(dir, pki.RoleShuffler), filepath.Join(dir, pki.RoleClient), filepath.Join(dir, pki.OperatorDir))
			return nil
		},
	}
	initCmd.Flags().StringVar(&dir, "dir", "", "the PKI `DIR` to create (its parent must exist)")
	initCmd.Flags().StringVar(&hosts, "hosts", "", "extra host names or IP addresses of the server's and the shuffler's certificates, comma separated")
	initCmd.Flags().StringVar(&deployment, "deployment", pki.DefaultDeployment, "the deployment's `NAME` (the trust domain of spiffe://NAME/ROLE)")
	return initCmd
}

// newPKIEnrolCmd is pki enrol.
func newPKIEnrolCmd() *cobra.Command {
	var edir, clients, out string
	enrolCmd := &cobra.Command{
		Use:   "enrol --dir DIR --clients LO:HI --out FILE",
		Short: "Issue the credentials of clients LO..HI-1 (a file for the client process hosting them)",
		Long: fmt.Sprintf(`enrol issues the bearer credentials of clients LO..HI-1 into FILE (0600, never
overwritten), for the client process hosting them. DIR is the directory pki
init wrote (its operator/clients.key) or the shuffler's bundle. At most %d
clients per file: enrol a larger population in several files.`, pki.MaxEnrol),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if edir == "" || out == "" {
				return errors.New("dir and out are required")
			}
			lo, hi, err := pki.ParseRange("clients", clients)
			if err != nil {
				return err
			}
			if hi-lo > pki.MaxEnrol {
				return fmt.Errorf("clients %d:%d: %d clients, at most %d per credentials file; enrol the range in several files", lo, hi, hi-lo, pki.MaxEnrol)
			}
			e, err := pki.LoadEnroller(edir)
			if err != nil {
				return err
			}
			c, err := e.Enrol(lo, hi)
			if err != nil {
				return err
			}
			if err := pki.WriteCredentials(out, c); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "enrolled clients %d..%d (%d credentials) in %s\n", lo, hi-1, hi-lo, out)
			return nil
		},
	}
	enrolCmd.Flags().StringVar(&edir, "dir", "", "the PKI `DIR` (pki init's directory, or the shuffler's bundle)")
	enrolCmd.Flags().StringVar(&clients, "clients", "", "the clients `LO:HI`")
	enrolCmd.Flags().StringVar(&out, "out", "", "the credentials `FILE` to write (0600, never overwritten)")
	return enrolCmd
}

// newPKIRotateCmd is pki rotate.
func newPKIRotateCmd() *cobra.Command {
	var rdir, role, rhosts string
	var revoke bool
	rotateCmd := &cobra.Command{
		Use:   "rotate --dir DIR --role server|shuffler|client [--hosts H1,H2]",
		Short: "Replace one role's key and certificate (the authority, the other bundles, the credentials and the ledgers are untouched)",
		Long:  longHelp("pki_rotate"),
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if rdir == "" || role == "" {
				return errors.New("dir and role are required")
			}
			c, err := pki.Rotate(rdir, pki.RotateConfig{Role: role, Hosts: splitHosts(rhosts), SetHosts: cmd.Flags().Changed("hosts"), Revoke: revoke})
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "rotated the %s's key and certificate (serial %x, valid until %s) in %s; copy it to the %s's host and restart the %s\n",
				role, c.SerialNumber, c.NotAfter.UTC().Format("2006-01-02"), filepath.Join(rdir, role), role, role)
			if revoke {
				fmt.Fprintf(cmd.OutOrStdout(), "revoked the replaced certificate (%s in every bundle); copy every bundle to its host\n", pki.RevokedFile)
			}
			return nil
		},
	}
	rotateCmd.Flags().StringVar(&rdir, "dir", "", "the `DIR` pki init wrote (with operator/ca.key)")
	rotateCmd.Flags().StringVar(&role, "role", "", "the `ROLE` to rotate: server, shuffler or client")
	rotateCmd.Flags().StringVar(&rhosts, "hosts", "", "new extra host names or IP addresses (server and shuffler only), comma separated")
	rotateCmd.Flags().BoolVar(&revoke, "revoke", false, "also revoke the replaced certificate (pki revoke)")
	return rotateCmd
}

// newPKIRevokeCmd is pki revoke.
func newPKIRevokeCmd() *cobra.Command {
	var dir, serial string
	cmd := &cobra.Command{
		Use:   "revoke --dir DIR --serial HEX",
		Short: "Revoke a certificate by serial number: every role refuses a peer presenting it (copy the bundles again)",
		Long: `revoke adds a certificate's serial number (hexadecimal, as pki rotate prints it)
to the revocation list DIR/operator/` + pki.RevokedFile + ` and writes the list into every bundle.
Copy each bundle to its host and restart the roles: a role then refuses, inside
the TLS handshake, any peer presenting a revoked certificate, and refuses to
start on a revoked certificate of its own. Rotate a role before revoking its
current certificate (pki rotate --revoke does both).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dir == "" || serial == "" {
				return errors.New("dir and serial are required")
			}
			n, err := pki.ParseSerial(serial)
			if err != nil {
				return err
			}
			already, err := pki.Revoke(dir, n)
			if err != nil {
				return err
			}
			what := "revoked"
			if already {
				what = "already revoked"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s serial %x (%s in every bundle of %s); copy every bundle to its host and restart the roles\n", what, n, pki.RevokedFile, dir)
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "the `DIR` pki init wrote (with operator/ca.key)")
	cmd.Flags().StringVar(&serial, "serial", "", "the certificate's serial number, hexadecimal")
	return cmd
}
