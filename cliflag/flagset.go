package cliflag

import (
	"slices"

	"github.com/spf13/pflag"
)

// Args returns the flags set on fs's command line as arguments
// "--NAME=VALUE", in fs's order (sorted by name unless fs.SortFlags is
// false), leaving out the named ones: the command line that gives another
// process the same values.
func Args(fs *pflag.FlagSet, except ...string) []string {
	var args []string
	fs.Visit(func(fl *pflag.Flag) {
		if !slices.Contains(except, fl.Name) {
			args = append(args, "--"+fl.Name+"="+fl.Value.String())
		}
	})
	return args
}

// Values returns every flag of fs, set or default, as name → value,
// leaving out the named ones.
func Values(fs *pflag.FlagSet, except ...string) map[string]string {
	m := map[string]string{}
	fs.VisitAll(func(fl *pflag.Flag) {
		if !slices.Contains(except, fl.Name) {
			m[fl.Name] = fl.Value.String()
		}
	})
	return m
}

// Target is a FlagSet as a command line that values are applied to by
// name (a preset of flag values, for one): it has the methods Given and
// Set.
type Target struct{ FS *pflag.FlagSet }

// Given returns the named flag's value, whether it was set on the command
// line, and whether fs has the flag at all.
func (t Target) Given(name string) (value string, given, ok bool) {
	fl := t.FS.Lookup(name)
	if fl == nil {
		return "", false, false
	}
	return fl.Value.String(), fl.Changed, true
}

// Set sets the named flag as if given on the command line.
func (t Target) Set(name, value string) error { return t.FS.Set(name, value) }
