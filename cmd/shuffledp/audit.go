package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/shuffledp/shuffledp/randomizer"
	"github.com/spf13/cobra"
)

func init() { rootCmd.AddCommand(newAuditCmd()) }

func newAuditCmd() *cobra.Command {
	var (
		name   string
		eps0   float64
		clip   float64
		dim    int
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "audit --randomizer R --eps0 E --dim D [--json]",
		Short: "Exactly verify a randomizer's eps0-LDP ratio and unbiasedness over its input grid",
		Long:  longHelp("audit"),
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// Sigma 1 passes the gaussian randomizer's check: AuditAny refuses it.
			r, err := randomizer.NewChecked(name, randomizer.Config{Eps0: eps0, Dim: dim, Radius: clip, Sigma: 1})
			if err != nil {
				return err
			}
			res, err := randomizer.AuditAny(r)
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				err = enc.Encode(res)
			} else {
				err = res.WriteText(cmd.OutOrStdout(), clip)
			}
			if err != nil {
				return err
			}
			return res.Err()
		},
	}
	f := cmd.Flags()
	f.StringVar(&name, "randomizer", "", "randomizer to audit: "+strings.Join(randomizer.Names, "|"))
	f.Float64Var(&eps0, "eps0", 0, "local DP parameter eps0 > 0")
	f.Float64Var(&clip, "clip", 1, "radius of the input ball")
	f.IntVar(&dim, "dim", 0, fmt.Sprintf("input dimension D; <= %d for the exact audits (krr, rinf, r1: at the limit krr takes about 3 s of CPU and 650 MB)", randomizer.MaxAuditDim))
	f.BoolVar(&asJSON, "json", false, "print the result as JSON")
	return cmd
}
