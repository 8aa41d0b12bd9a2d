package main

import (
	"bytes"
	"testing"

	"github.com/spf13/cobra"
)

// runCmd executes a freshly built subcommand with args and returns stdout.
func runCmd(t *testing.T, newCmd func() *cobra.Command, args ...string) (string, error) {
	t.Helper()
	cmd := newCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}
