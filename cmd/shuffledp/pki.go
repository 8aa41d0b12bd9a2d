package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/shuffledp/shuffledp/pki"
)

func init() { rootCmd.AddCommand(newPKICmd()) }

func newPKICmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pki",
		Short: "Create a networked deployment's certificates and client credentials",
		Args:  cobra.NoArgs,
	}
	var dir, hosts string
	initCmd := &cobra.Command{
		Use:   "init --dir DIR [--hosts H1,H2]",
		Short: "Create a local CA, the server's and the shuffler's TLS certificates and the client-credential secret",
		Long: `init creates DIR (keys 0600): ca.pem/ca.key, server.pem/server.key,
shuffler.pem/shuffler.key (valid for the loopback addresses, localhost and
--hosts) and clients.key, the shuffler's secret from which client credentials
are derived. An existing complete DIR is kept.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dir == "" {
				return errors.New("dir is required")
			}
			var hs []string
			if hosts != "" {
				hs = strings.Split(hosts, ",")
			}
			if err := pki.Init(dir, hs); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "pki in %s\n", dir)
			return nil
		},
	}
	initCmd.Flags().StringVar(&dir, "dir", "", "the PKI `DIR` to create (its parent must exist)")
	initCmd.Flags().StringVar(&hosts, "hosts", "", "extra host names or IP addresses of the server and shuffler certificates, comma separated")
	var edir, clients, out string
	enrolCmd := &cobra.Command{
		Use:   "enrol --dir DIR --clients LO:HI --out FILE",
		Short: "Issue the credentials of clients LO..HI-1 (a file for the client process hosting them)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if edir == "" || out == "" {
				return errors.New("dir and out are required")
			}
			lo, hi, err := parseRange("clients", clients)
			if err != nil {
				return err
			}
			e, err := pki.LoadEnroller(edir)
			if err != nil {
				return err
			}
			c, err := e.Enrol(lo, hi)
			if err != nil {
				return err
			}
			return pki.WriteCredentials(out, c)
		},
	}
	enrolCmd.Flags().StringVar(&edir, "dir", "", "the PKI `DIR` (clients.key)")
	enrolCmd.Flags().StringVar(&clients, "clients", "", "the clients `LO:HI`")
	enrolCmd.Flags().StringVar(&out, "out", "", "the credentials `FILE` to write (0600, never overwritten)")
	cmd.AddCommand(initCmd, enrolCmd)
	return cmd
}
