package cliflag

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// UsageErrors makes every command of the tree under root report a
// command line it cannot parse through usage (which marks an error as a
// usage error; the shuffledp command exits 2 on one): flag errors,
// argument validators, and a missing or unknown subcommand of a command
// that only groups subcommands (cobra would print help and succeed). It
// first adds cobra's own help and completion commands (which cobra
// otherwise adds only when the tree executes), so that they are held to
// the same rules: `completion bogus` and `help bogus` are usage errors,
// not help printed with status 0.
func UsageErrors(root *cobra.Command, usage func(error) error) {
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usage(err) })
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.HasSubCommands() && !c.Runnable() {
			c.Args = cobra.ArbitraryArgs
			c.RunE = UnknownSubcommand("subcommand", usage)
		}
		if args := c.Args; args != nil {
			c.Args = func(cmd *cobra.Command, a []string) error { return usage(args(cmd, a)) }
		}
		if c.Name() == "help" && c.Parent() == root {
			strictHelp(c, usage)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// strictHelp makes the help command refuse a topic that names no command.
func strictHelp(help *cobra.Command, usage func(error) error) {
	run := help.Run
	help.Run = nil
	help.RunE = func(c *cobra.Command, args []string) error {
		if len(args) > 0 {
			if t, rest, err := c.Root().Find(args); err != nil || t == nil || len(rest) > 0 {
				return usage(fmt.Errorf("%s: unknown help topic %q (see %s --help)", c.CommandPath(), strings.Join(args, " "), c.Root().Name()))
			}
		}
		run(c, args)
		return nil
	}
}

// UnknownSubcommand is the RunE of a command that only groups
// subcommands: without it, cobra prints help and succeeds for a missing
// or unknown name. what names the kind of subcommand in the error ("data
// set"); the error goes through usage.
func UnknownSubcommand(what string, usage func(error) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		var names []string
		for _, c := range cmd.Commands() {
			if c.IsAvailableCommand() {
				names = append(names, c.Name())
			}
		}
		avail := strings.Join(names, ", ")
		if len(args) == 0 {
			return usage(fmt.Errorf("%s needs a %s: one of %s (see %s --help)", cmd.CommandPath(), what, avail, cmd.CommandPath()))
		}
		return usage(fmt.Errorf("%s: unknown %s %q (available: %s)", cmd.CommandPath(), what, args[0], avail))
	}
}
