package main

import (
	"embed"
	"strings"
)

// helpFiles are the long help texts of the subcommands, one file a command
// (help/NAME.txt), kept out of the Go source so that it holds logic only.
//
//go:embed help/*.txt
var helpFiles embed.FS

// longHelp returns the long help text help/NAME.txt without its final
// newline; it panics when the file is missing (a build error in effect: the
// help test runs every command's --help).
func longHelp(name string) string {
	b, err := helpFiles.ReadFile("help/" + name + ".txt")
	if err != nil {
		panic(err)
	}
	return strings.TrimSuffix(string(b), "\n")
}
