package main

import (
	"github.com/spf13/cobra"

	"github.com/shuffledp/shuffledp/calculator/site"
	"github.com/shuffledp/shuffledp/cliflag"
)

func init() { rootCmd.AddCommand(newCalculatorCmd()) }

// newCalculatorCmd is `shuffledp calculator`: the in-browser privacy
// calculator (package calculator), served or written out as static files.
func newCalculatorCmd() *cobra.Command {
	var p site.Publish
	cmd := &cobra.Command{
		Use:   "calculator",
		Short: "Serve the in-browser privacy calculator, or write it out as static files",
		Long:  longHelp("calculator"),
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := p.Check(); err != nil {
				return usageError(err)
			}
			ctx, stop := signalContext(commandContext(cmd))
			defer stop()
			return p.Run(ctx, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cliflag.MustBind(cmd.Flags(), &p)
	return cmd
}
