package main

import (
	"github.com/spf13/cobra"

	"github.com/shuffledp/shuffledp/cliflag"
	"github.com/shuffledp/shuffledp/randomizer"
)

func init() { rootCmd.AddCommand(newAuditCmd()) }

func newAuditCmd() *cobra.Command {
	var f struct {
		randomizer.AuditRequest
		JSON bool `flag:"json" usage:"print the result as JSON"`
	}
	cmd := &cobra.Command{
		Use:   "audit --randomizer R --eps0 E --dim D [--json]",
		Short: "Exactly verify a randomizer's eps0-LDP ratio and unbiasedness over its input grid",
		Long:  longHelp("audit"),
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			res, err := f.Audit()
			if err != nil {
				return err
			}
			if f.JSON {
				err = res.WriteJSON(cmd.OutOrStdout())
			} else {
				err = res.WriteText(cmd.OutOrStdout(), f.Clip)
			}
			if err != nil {
				return err
			}
			return res.Err()
		},
	}
	cliflag.MustBind(cmd.Flags(), &f)
	return cmd
}
