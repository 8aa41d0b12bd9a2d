package training

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/shuffledp/shuffledp/cliflag"
	"github.com/shuffledp/shuffledp/data"
	"github.com/shuffledp/shuffledp/metrics"
)

// runRecords runs cfg on train and returns the trainer and its records.
func runRecords(t *testing.T, cfg Config, train, test *data.Dataset) (*Trainer, []metrics.Record) {
	t.Helper()
	tr, err := New(cfg, newLogReg(t, train.Dim, train.Classes), train, test)
	if err != nil {
		t.Fatal(err)
	}
	var recs []metrics.Record
	if _, err := tr.Run(context.Background(), Hooks{OnEval: func(r metrics.Record) error { recs = append(recs, r); return nil }}); err != nil {
		t.Fatal(err)
	}
	return tr, recs
}

// TestClientLevelAccountingUnchanged: the ledger's epsilon depends on n, k,
// eps0 and the rounds, not on what a client's update is made of: the same
// for M = 1, E = 1 and M = 5, E = 3 (and another partition), to the last
// bit, with the same number of rounds debited; the records of the second
// say the neighbouring unit is the client.
func TestClientLevelAccountingUnchanged(t *testing.T) {
	train, test := blobs(3000, 10, 4, 1, 1), blobs(200, 10, 4, 1, 2)
	base := privateConfig(t)
	base.Epochs = 2
	one, oneRecs := runRecords(t, base, train, test)
	multi := base
	multi.ExamplesPerClient, multi.LocalSteps, multi.LocalLR = 5, 3, 0.2
	multi.Partition = data.Partition{Kind: data.PartitionDirichlet, Alpha: 0.3}
	five, fiveRecs := runRecords(t, multi, train, test)
	a, err := one.Ledger().Epsilon()
	if err != nil {
		t.Fatal(err)
	}
	b, err := five.Ledger().Epsilon()
	if err != nil {
		t.Fatal(err)
	}
	if one.Ledger().Rounds() != 20 || five.Ledger().Rounds() != 20 || a.Epsilon != b.Epsilon || a.Order != b.Order {
		t.Fatalf("M=1,E=1: %d rounds, epsilon %v (order %g); M=5,E=3: %d rounds, epsilon %v (order %g)",
			one.Ledger().Rounds(), a.Epsilon, a.Order, five.Ledger().Rounds(), b.Epsilon, b.Order)
	}
	if want := directEpsilon(t, base.Clients, base.Sample, base.Eps0, 20, base.Delta); a.Epsilon != want && (a.Epsilon-want) > 1e-12*want {
		t.Errorf("ledger epsilon %g, accountant %g", a.Epsilon, want)
	}
	lastOne, lastFive := oneRecs[len(oneRecs)-1], fiveRecs[len(fiveRecs)-1]
	if *lastOne.Epsilon != *lastFive.Epsilon {
		t.Errorf("records' epsilon %g and %g differ", *lastOne.Epsilon, *lastFive.Epsilon)
	}
	if lastOne.Neighbouring != "" || lastOne.ExamplesPerClient != 0 || lastOne.Partition != "" || lastOne.LocalSteps != 0 {
		t.Errorf("a one-example run's record names client-level fields: %+v", lastOne)
	}
	if lastFive.Neighbouring != NeighbouringClient || lastFive.ExamplesPerClient != 5 || lastFive.Partition != "dirichlet:0.3" ||
		lastFive.LocalSteps != 3 || lastFive.LocalLR != 0.2 {
		t.Errorf("the M=5, E=3 record: neighbouring %q, M %d, partition %q, E %d, local lr %g",
			lastFive.Neighbouring, lastFive.ExamplesPerClient, lastFive.Partition, lastFive.LocalSteps, lastFive.LocalLR)
	}
}

// TestClientLevelLearns: clients holding 5 examples each, dealt with label
// skew (dirichlet:0.5), taking 3 local steps, learn the blobs through the
// private pipeline (Gaussian clients, sigma 1) and the non-private one:
// the test loss at least halves and the accuracy passes 0.85 (chance is
// 0.25).
func TestClientLevelLearns(t *testing.T) {
	train, test := blobs(3000, 10, 4, 1, 1), blobs(400, 10, 4, 1, 2)
	for _, randomizer := range []string{RandomizerNone, RandomizerGaussian} {
		cfg := baseConfig(t)
		cfg.Epochs = 4
		cfg.ExamplesPerClient, cfg.LocalSteps, cfg.LocalLR = 5, 3, 0.3
		cfg.Partition = data.Partition{Kind: data.PartitionDirichlet, Alpha: 0.5}
		cfg.Randomizer = randomizer
		if randomizer == RandomizerGaussian {
			cfg.Sigma = 1
		}
		tr, err := New(cfg, newLogReg(t, 10, 4), train, test)
		if err != nil {
			t.Fatal(err)
		}
		before := tr.Evaluate(nil)
		if _, err := tr.Run(context.Background(), Hooks{}); err != nil {
			t.Fatal(err)
		}
		after := tr.Evaluate(nil)
		t.Logf("%s: test loss %.3f -> %.3f, accuracy %.3f -> %.3f", randomizer, before.Loss, after.Loss, before.Accuracy, after.Accuracy)
		if !(after.Loss < before.Loss/2) || !(after.Accuracy > 0.85) {
			t.Errorf("%s: test loss %.3f -> %.3f, accuracy %.3f -> %.3f", randomizer, before.Loss, after.Loss, before.Accuracy, after.Accuracy)
		}
	}
}

// TestDefaultClientDataUnchanged: M = 1, E = 1 and the index partition,
// given explicitly, train exactly the run of the zero values (the run of
// every build before these options), for a private randomizer and the
// non-private baseline; the iid partition at M = 1 deals other examples,
// and trains another model.
func TestDefaultClientDataUnchanged(t *testing.T) {
	train, test := blobs(900, 10, 4, 1, 1), blobs(100, 10, 4, 1, 2)
	for _, cfg := range []Config{privateConfig(t), baseConfig(t)} {
		cfg.Epochs = 1
		plain, _ := runRecords(t, cfg, train, test)
		explicit := cfg
		explicit.ExamplesPerClient, explicit.LocalSteps, explicit.Partition = 1, 1, data.Partition{Kind: data.PartitionIndex}
		same, _ := runRecords(t, explicit, train, test)
		if !slices.Equal(plain.Model().Params(), same.Model().Params()) {
			t.Errorf("%s: explicit defaults trained another model", cfg.Randomizer)
		}
		iid := cfg
		iid.Partition = data.Partition{Kind: data.PartitionIID}
		other, _ := runRecords(t, iid, train, test)
		if slices.Equal(plain.Model().Params(), other.Model().Params()) {
			t.Errorf("%s: the iid partition trained the index partition's model", cfg.Randomizer)
		}
	}
}

// TestClientDataRefused: bad values of the new flags are refused by
// Options.Config, before any data is loaded, naming the flag; a training
// set smaller than clients*M is refused naming examples-per-client.
func TestClientDataRefused(t *testing.T) {
	defaults := func() Options {
		var o Options
		if err := cliflag.Bind(pflag.NewFlagSet("train", pflag.ContinueOnError), &o); err != nil {
			t.Fatal(err)
		}
		return o
	}
	for _, c := range []struct {
		set  func(*Options)
		flag string
	}{
		{func(o *Options) { o.ExamplesPerClient = 0 }, "examples-per-client"},
		{func(o *Options) { o.ExamplesPerClient = -2 }, "examples-per-client"},
		{func(o *Options) { o.Partition = "skewed" }, "partition"},
		{func(o *Options) { o.Partition = "dirichlet:0" }, "partition"},
		{func(o *Options) { o.Partition, o.ExamplesPerClient = "shards:3", 4 }, "examples-per-client"},
		{func(o *Options) { o.LocalSteps = 0 }, "local-steps"},
		{func(o *Options) { o.LocalSteps = 1 << 20 }, "local-steps"},
		{func(o *Options) { o.LocalSteps, o.LocalLR = 2, -1 }, "local-lr"},
		{func(o *Options) { o.LocalLR = 0.1 }, "local-lr"},
		{func(o *Options) { o.ExamplesPerClient, o.ClipDiagnostic = 2, true }, "clip-diagnostic"},
		{func(o *Options) { o.Clients, o.Sample, o.ExamplesPerClient = 1<<20, 10, 1<<12 }, "examples-per-client"},
	} {
		o := defaults()
		c.set(&o)
		given := func(f string) bool { return f == "examples-per-client" || f == "local-steps" || f == "local-lr" }
		if _, err := o.Config(given, nil); err == nil || !strings.Contains(err.Error(), c.flag) {
			t.Errorf("M %d, partition %s, E %d, local-lr %g: %v, want an error naming %s", o.ExamplesPerClient, o.Partition, o.LocalSteps, o.LocalLR, err, c.flag)
		}
	}
	// The local step size defaults to the first rate of --lr.
	o := defaults()
	o.LocalSteps, o.LR = 4, "0.25,3:0.1"
	if cfg, err := o.Config(func(string) bool { return false }, nil); err != nil || cfg.LocalLR != 0.25 {
		t.Errorf("local-lr default: %g, %v; want 0.25", cfg.LocalLR, err)
	}
	cfg := baseConfig(t)
	cfg.ExamplesPerClient = 2
	if _, err := New(cfg, newLogReg(t, 10, 4), blobs(1000, 10, 4, 1, 1), nil); err == nil || !strings.Contains(err.Error(), "examples-per-client") {
		t.Errorf("600 clients of 2 examples on 1000: %v", err)
	}
	if tr, _, err := data.Load(data.Spec{Name: "synthetic", Clients: 50, ExamplesPerClient: 3, Validation: 10}); err != nil || tr.N != 150 {
		t.Errorf("synthetic set of 50 clients * 3 with a validation split: %v", err)
	}
}

// TestClientLevelDeterministic: a run of clients with several examples and
// local steps is bitwise the same for any number of workers (each worker
// holds its own client's examples and local model) and for the same seed.
func TestClientLevelDeterministic(t *testing.T) {
	train, test := blobs(1800, 10, 4, 1, 1), blobs(100, 10, 4, 1, 2)
	var params [][]float64
	for _, workers := range []int{1, 3, 1} {
		cfg := privateConfig(t)
		cfg.Epochs, cfg.Workers = 1, workers
		cfg.ExamplesPerClient, cfg.LocalSteps, cfg.LocalLR = 3, 2, 0.3
		cfg.Partition = data.Partition{Kind: data.PartitionShards, Shards: 3}
		tr, _ := runRecords(t, cfg, train, test)
		params = append(params, slices.Clone(tr.Model().Params()))
	}
	if !slices.Equal(params[0], params[1]) || !slices.Equal(params[0], params[2]) {
		t.Error("the parameters depend on the number of workers or differ between two runs")
	}
}
