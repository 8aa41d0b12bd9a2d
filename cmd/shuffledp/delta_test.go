package main

import (
	"strings"
	"testing"
)

// TestDeltaDefaultsNamed checks that account and ledger show state the
// delta they convert at, in their output and (with the other's default)
// in their help: account defaults to 1e-8, a run's ledger to train's 1e-5.
func TestDeltaDefaultsNamed(t *testing.T) {
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"--n", "1000", "--k", "100", "--eps0", "1", "--steps", "10"}, []string{"delta=1e-08"}},
		{[]string{"--n", "1000", "--k", "100", "--eps0", "1", "--steps", "10", "--delta", "1e-5"}, []string{"delta=1e-05"}},
		{[]string{"--n", "1000", "--k", "100", "--eps0", "1", "--steps", "10", "--json"}, []string{`"delta": 1e-8`}},
		{[]string{"--help"}, []string{"1e-8", "1e-5", "names the delta used"}},
	}
	for _, c := range cases {
		out, err := runCmd(t, newAccountCmd, c.args...)
		if err != nil {
			t.Fatalf("account %v: %v\n%s", c.args, err, out)
		}
		for _, w := range c.want {
			if !strings.Contains(strings.Join(strings.Fields(out), " "), w) {
				t.Errorf("account %v: output lacks %q:\n%s", c.args, w, out)
			}
		}
	}
	for _, newCmd := range []func() (string, error){
		func() (string, error) { return runCmd(t, newLedgerCmd, "show", "--help") },
		func() (string, error) { return runCmd(t, newTrainCmd, "--help") },
	} {
		out, err := newCmd()
		if err != nil || !strings.Contains(out, "1e-8") {
			t.Errorf("help does not name account's default delta 1e-8 (%v):\n%s", err, out)
		}
	}
}
