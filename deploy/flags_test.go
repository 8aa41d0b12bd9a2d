package deploy

import (
	"bytes"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/shuffledp/shuffledp/cliflag"
	"github.com/shuffledp/shuffledp/metrics"
	"github.com/shuffledp/shuffledp/node"
	"github.com/shuffledp/shuffledp/shard"
	"github.com/shuffledp/shuffledp/training"
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

func TestServerLines(t *testing.T) {
	acc, eps, rounds := 0.5, 1.25, int64(7)
	var b bytes.Buffer
	if err := PrintEvaluations(&b, 10)(metrics.Record{Round: 5, Epoch: 0.5, TestAccuracy: &acc, Epsilon: &eps, LedgerRounds: &rounds}); err != nil {
		t.Fatal(err)
	}
	if err := PrintEvaluations(&b, 10)(metrics.Record{Round: 6, Epoch: 0.6}); err != nil {
		t.Fatal(err)
	}
	o := ServerOutcome{Reason: training.StopEpochs, Last: metrics.Record{Round: 10, Epoch: 1, TestAccuracy: &acc}}
	if err := o.WriteEnd(&b, 1e-5); err != nil {
		t.Fatal(err)
	}
	want := "server: round 5/10 epoch 0.5 acc 0.5000 eps 1.25 (7 ledger rounds)\n" +
		"server: round 6/10 epoch 0.6 acc n/a eps n/a (0 ledger rounds)\n" +
		"stopped (epochs) after round 10 (epoch 1): test accuracy 0.5000, epsilon n/a at delta 1e-05\n"
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}
