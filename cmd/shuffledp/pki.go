package main

import (
	"github.com/spf13/cobra"

	"github.com/shuffledp/shuffledp/cliflag"
	"github.com/shuffledp/shuffledp/pki"
)

func init() { rootCmd.AddCommand(newPKICmd()) }

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
	var q pki.InitRequest
	cmd := &cobra.Command{
		Use:   "init --dir DIR [--hosts H1,H2] [--deployment NAME]",
		Short: "Create the deployment's authority, one certificate per role and the client-credential secret, as one bundle per host",
		Long:  longHelp("pki_init"),
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return q.Run(cmd.OutOrStdout()) },
	}
	cliflag.MustBind(cmd.Flags(), &q)
	return cmd
}

// newPKIEnrolCmd is pki enrol.
func newPKIEnrolCmd() *cobra.Command {
	var q pki.EnrolRequest
	cmd := &cobra.Command{
		Use:   "enrol --dir DIR --clients LO:HI --out FILE",
		Short: "Issue the credentials of clients LO..HI-1 (a file for the client process hosting them)",
		Long:  longHelp("pki_enrol"),
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return q.Run(cmd.OutOrStdout()) },
	}
	cliflag.MustBind(cmd.Flags(), &q)
	return cmd
}

// newPKIRotateCmd is pki rotate.
func newPKIRotateCmd() *cobra.Command {
	var q pki.RotateRequest
	cmd := &cobra.Command{
		Use:   "rotate --dir DIR --role server|shuffler|client [--hosts H1,H2]",
		Short: "Replace one role's key and certificate (the authority, the other bundles, the credentials and the ledgers are untouched)",
		Long:  longHelp("pki_rotate"),
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return q.Run(cmd.OutOrStdout(), cmd.Flags().Changed("hosts"))
		},
	}
	cliflag.MustBind(cmd.Flags(), &q)
	return cmd
}

// newPKIRevokeCmd is pki revoke.
func newPKIRevokeCmd() *cobra.Command {
	var q pki.RevokeRequest
	cmd := &cobra.Command{
		Use:   "revoke --dir DIR --serial HEX",
		Short: "Revoke a certificate by serial number: every role refuses a peer presenting it (copy the bundles again)",
		Long:  longHelp("pki_revoke"),
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return q.Run(cmd.OutOrStdout()) },
	}
	cliflag.MustBind(cmd.Flags(), &q)
	return cmd
}
