package e2e

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// TestUsageErrorsExit2 runs the binary with an unknown subcommand at every
// level, a missing subcommand, a stray argument and an unknown flag, and
// checks that each exits 2 (a usage error, as Go's own tools do) with a
// message naming what was wrong, and that --help still exits 0.
func TestUsageErrorsExit2(t *testing.T) {
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"bogus"}, 2, `unknown subcommand "bogus"`},
		{[]string{"pki", "bogus"}, 2, `unknown subcommand "bogus"`},
		{[]string{"ledger", "bogus"}, 2, `unknown subcommand "bogus"`},
		{[]string{"data", "bogus"}, 2, `unknown subcommand "bogus"`},
		{[]string{"data", "fetch", "bogus"}, 2, `unknown data set "bogus"`},
		{[]string{"pki"}, 2, "needs a subcommand"},
		{[]string{"ledger"}, 2, "needs a subcommand"},
		{[]string{"account", "stray"}, 2, `"stray"`},
		{[]string{"ledger", "show", "stray"}, 2, `"stray"`},
		{[]string{"account", "--bogus-flag"}, 2, "bogus-flag"},
		{[]string{"pki", "init", "--bogus-flag"}, 2, "bogus-flag"},
		{[]string{"completion", "bogus"}, 2, `unknown subcommand "bogus"`},
		{[]string{"completion"}, 2, "needs a subcommand"},
		{[]string{"help", "bogus"}, 2, `unknown help topic "bogus"`},
		{[]string{"help", "pki", "bogus"}, 2, `unknown help topic "pki bogus"`},
		{[]string{"help", "pki"}, 0, "Available Commands"},
		{[]string{"completion", "bash"}, 0, "bash completion"},
		{[]string{"pki", "--help"}, 0, "Available Commands"},
		{[]string{"--help"}, 0, "Available Commands"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, "_"), func(t *testing.T) {
			out, err := child(nil, c.args...).CombinedOutput()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != c.code || !strings.Contains(string(out), c.want) {
				t.Fatalf("shuffledp %v: exit %d, want %d with %q in:\n%s", c.args, code, c.code, c.want, out)
			}
		})
	}
}
