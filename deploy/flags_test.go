package deploy

import (
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/shuffledp/shuffledp/cliflag"
	"github.com/shuffledp/shuffledp/node"
	"github.com/shuffledp/shuffledp/shard"
)

// TestProcessFlagDefaults binds each role process's flags (cliflag.Bind,
// as the command does) and checks that the defaults written in the tags
// are the node's constants they stand for.
func TestProcessFlagDefaults(t *testing.T) {
	var (
		srv ServerProcess
		shf ShufflerProcess
		cli ClientProcess
	)
	for _, tc := range []struct {
		name string
		v    any
		want map[string]time.Duration
	}{
		{"server", &srv, map[string]time.Duration{"batch-timeout": node.DefaultBatchTimeout}},
		{"shuffler", &shf, map[string]time.Duration{"round-timeout": node.DefaultRoundTimeout, "connect-timeout": node.DefaultConnectTimeout,
			"register-timeout": node.DefaultRegisterTimeout, "model-timeout": node.DefaultModelTimeout, "lease-ttl": shard.DefaultLeaseTTL}},
		{"client", &cli, map[string]time.Duration{"connect-timeout": node.DefaultConnectTimeout}},
	} {
		fs := pflag.NewFlagSet(tc.name, pflag.ContinueOnError)
		if err := cliflag.Bind(fs, tc.v); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for flag, want := range tc.want {
			if got := fs.Lookup(flag).DefValue; got != want.String() {
				t.Errorf("%s --%s defaults to %s, want %s", tc.name, flag, got, want)
			}
		}
		if fs.Lookup("eps0") != nil {
			t.Errorf("%s: the train flags of ServerConfig were bound", tc.name)
		}
	}
	if shf.Node.Delta != 1e-5 || shf.Node.Adjacency != "replace-one" || shf.Node.Shards != 1 || srv.Shards != 1 || cli.Pool.Workers != 1 {
		t.Errorf("defaults: shuffler delta %g adjacency %q shards %d, server shards %d, client workers %d",
			shf.Node.Delta, shf.Node.Adjacency, shf.Node.Shards, srv.Shards, cli.Pool.Workers)
	}
}
