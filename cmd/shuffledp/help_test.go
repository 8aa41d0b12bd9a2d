package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/shuffledp/shuffledp/data"
	"github.com/shuffledp/shuffledp/ledger"
	"github.com/shuffledp/shuffledp/pki"
)

// allCommands returns root and every command below it.
func allCommands(root *cobra.Command) []*cobra.Command {
	cmds := []*cobra.Command{root}
	for _, c := range root.Commands() {
		cmds = append(cmds, allCommands(c)...)
	}
	return cmds
}

// TestFlagHelpValueNames scans the flag help of every command. pflag's
// UnquoteUsage takes the first back-quoted part of a usage string as the
// flag's value name, so a usage string that quotes a command line
// (`shuffledp data fetch mnist --dir DIR`) renders that command line in the
// place of the value name. A back-quoted value name must be one word.
func TestFlagHelpValueNames(t *testing.T) {
	cmds := allCommands(rootCmd)
	if len(cmds) < 10 {
		t.Fatalf("found only %d commands under %s", len(cmds), rootCmd.Name())
	}
	nflags := 0
	for _, c := range cmds {
		check := func(f *pflag.Flag) {
			nflags++
			name, usage := pflag.UnquoteUsage(f)
			if strings.ContainsAny(name, " \t\n") {
				t.Errorf("%s --%s: help shows the value name %q (taken from the back-quoted part of the usage %q); quote a command with \"...\" or say it in words", c.CommandPath(), f.Name, name, f.Usage)
			}
			if strings.Count(f.Usage, "`")%2 != 0 {
				t.Errorf("%s --%s: unbalanced back-quote in usage %q", c.CommandPath(), f.Name, f.Usage)
			}
			if strings.TrimSpace(usage) == "" {
				t.Errorf("%s --%s: empty usage", c.CommandPath(), f.Name)
			}
		}
		c.LocalFlags().VisitAll(check)
		c.InheritedFlags().VisitAll(check)
	}
	if nflags == 0 {
		t.Fatal("no flags scanned")
	}
}

// TestFlagHelpRendersValueNames checks the same in the rendered --help
// text of every command: between a flag and its usage, at most one word.
func TestFlagHelpRendersValueNames(t *testing.T) {
	for _, c := range allCommands(rootCmd) {
		for _, line := range strings.Split(c.LocalFlags().FlagUsages(), "\n") {
			line = strings.TrimSpace(line)
			if line == "" {
				continue
			}
			// "-s, --name VALUE   usage": the part before the first run of
			// three spaces (pflag pads to at least that) is the flag column.
			col, _, _ := strings.Cut(line, "   ")
			if !strings.HasPrefix(col, "--") { // "-s, --name"
				_, col, _ = strings.Cut(col, ", ")
			}
			if f := strings.Fields(col); len(f) > 2 {
				t.Errorf("%s: flag column %q has more than a flag and one value name (line %q)", c.CommandPath(), col, line)
			}
		}
	}
}

// TestLongHelpNamesConstants: the long help texts in help/*.txt that
// state a constant of a library package state its current value.
func TestLongHelpNamesConstants(t *testing.T) {
	for _, tc := range []struct{ help, want string }{
		{"ledger", "DIR/" + ledger.FileName},
		{"pki_enrol", fmt.Sprintf("At most %d\nclients per file", pki.MaxEnrol)},
		{"pki_revoke", "DIR/operator/" + pki.RevokedFile},
		{"data_fetch_mnist", "(default " + data.DefaultMNISTDir + ","},
	} {
		if h := longHelp(tc.help); !strings.Contains(h, tc.want) {
			t.Errorf("help/%s.txt does not say %q", tc.help, tc.want)
		}
	}
}
