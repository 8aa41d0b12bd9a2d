package training

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/shuffledp/shuffledp/cliflag"
	"github.com/shuffledp/shuffledp/data"
	"github.com/shuffledp/shuffledp/server"
)

// TestOptionsFlagDefaults binds Options' flags (cliflag.Bind) and checks
// that the defaults written in its tags are the package constants they
// stand for, and that a default configuration validates.
func TestOptionsFlagDefaults(t *testing.T) {
	var o Options
	fs := pflag.NewFlagSet("train", pflag.ContinueOnError)
	if err := cliflag.Bind(fs, &o); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ flag, want string }{
		{"optimizer", server.OptimizerSGD},
		{"lr-decay", DecayNone},
		{"participation", ParticipationSample},
		{"randomizer", RandomizerRInf},
		{"linf-clip", "scale"},
	} {
		if got := fs.Lookup(tc.flag).DefValue; got != tc.want {
			t.Errorf("--%s defaults to %q, want %q", tc.flag, got, tc.want)
		}
	}
	if u := fs.Lookup("data-dir").Usage; !strings.Contains(u, data.DefaultMNISTDir) {
		t.Errorf("--data-dir's usage %q does not name %s", u, data.DefaultMNISTDir)
	}
	if _, err := o.Config(func(string) bool { return false }, nil); err != nil {
		t.Errorf("the default options do not validate: %v", err)
	}
}
