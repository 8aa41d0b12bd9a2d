package training

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

// runRounds builds a fresh trainer (fresh zero logistic-regression model)
// and runs rounds rounds.
func runRounds(t *testing.T, cfg Config, rounds int, opts ...Option) *Trainer {
	t.Helper()
	train := blobs(cfg.Clients, 10, 4, 1, 1)
	tr, err := New(cfg, newLogReg(t, 10, 4), train, nil, opts...)
	if err != nil {
		t.Fatal(err)
	}
	steps(t, tr, rounds)
	return tr
}

func steps(t *testing.T, tr *Trainer, rounds int) {
	t.Helper()
	for range rounds {
		if _, err := tr.Step(); err != nil {
			t.Fatal(err)
		}
	}
}

func bitwiseEqual(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

// determinismConfigs are the randomizer settings the determinism and
// checkpoint tests run under.
func determinismConfigs(t *testing.T) []Config {
	var cfgs []Config
	for _, r := range []string{RandomizerNone, RandomizerRInf, RandomizerR1, RandomizerR2, RandomizerPrivUnit, RandomizerDJW} {
		c := baseConfig(t)
		c.Randomizer, c.Eps0, c.Clip = r, 2, 0.5
		if r == RandomizerNone {
			c.ProjectRadius = 3
		}
		cfgs = append(cfgs, c)
	}
	return append(cfgs, gaussianConfigs(t)...) // gaussian_test.go
}

// TestDeterministicAcrossWorkers: the same seed gives bitwise-identical
// parameters whatever the number of workers (fixed shards, per-client noise
// streams, partial sums added in shard order); a different seed does not.
func TestDeterministicAcrossWorkers(t *testing.T) {
	for _, cfg := range determinismConfigs(t) {
		t.Run(cfg.Randomizer, func(t *testing.T) {
			var ref []float64
			for _, w := range []int{1, 2, 5} {
				c := cfg
				c.Workers = w
				p := runRounds(t, c, 12).Model().Params()
				if ref == nil {
					ref = p
				} else if !bitwiseEqual(ref, p) {
					t.Fatalf("workers=%d gives different parameters than workers=1", w)
				}
			}
			c := cfg
			c.Seed++
			if bitwiseEqual(ref, runRounds(t, c, 12).Model().Params()) && cfg.Randomizer != RandomizerNone {
				t.Fatalf("seed %d and %d give identical parameters", cfg.Seed, c.Seed)
			}
		})
	}
}

// TestCheckpointResumeBitwise: N rounds straight == M rounds, checkpoint,
// resume in a fresh trainer, N-M rounds; the ledger (shared, as a run's
// durable ledger is across processes) continues too.
func TestCheckpointResumeBitwise(t *testing.T) {
	const n, m = 13, 5
	for _, cfg := range determinismConfigs(t) {
		t.Run(cfg.Randomizer, func(t *testing.T) {
			straight := runRounds(t, cfg, n)

			var opts []Option
			if cfg.Randomizer != RandomizerNone {
				l, err := OpenMemoryLedger(cfg, DefaultRunID)
				if err != nil {
					t.Fatal(err)
				}
				opts = append(opts, WithLedger(l))
			}
			first := runRounds(t, cfg, m, opts...)
			var buf bytes.Buffer
			if err := first.WriteCheckpoint(&buf); err != nil {
				t.Fatal(err)
			}
			c2 := cfg
			c2.Workers = 3 // the worker count may change across a resume
			resumed := runRounds(t, c2, 0, opts...)
			if err := resumed.ReadCheckpoint(bytes.NewReader(buf.Bytes())); err != nil {
				t.Fatal(err)
			}
			if resumed.Round() != m || (len(opts) > 0 && resumed.Ledger().Rounds() != m) {
				t.Fatalf("resumed at round %d, ledger %v; want %d", resumed.Round(), resumed.Ledger(), m)
			}
			steps(t, resumed, n-m)
			if !bitwiseEqual(straight.Model().Params(), resumed.Model().Params()) {
				t.Fatal("resumed run differs from the straight run")
			}
			if len(opts) > 0 {
				if straight.Ledger().Rounds() != resumed.Ledger().Rounds() {
					t.Fatalf("ledger rounds %d vs %d", straight.Ledger().Rounds(), resumed.Ledger().Rounds())
				}
				g1, err1 := straight.Ledger().Epsilon()
				g2, err2 := resumed.Ledger().Epsilon()
				e1, e2 := g1.Epsilon, g2.Epsilon
				if err1 != nil || err2 != nil || e1 != e2 || !(e1 > 0) {
					t.Fatalf("epsilon after resume %v (%v), straight %v (%v)", e2, err2, e1, err1)
				}
			}
		})
	}
}

func TestCheckpointRejects(t *testing.T) {
	cfg := baseConfig(t)
	tr := runRounds(t, cfg, 2)
	var buf bytes.Buffer
	if err := tr.WriteCheckpoint(&buf); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()

	for _, tc := range []struct {
		name   string
		mutate func(*Config)
		want   string
	}{
		{"seed", func(c *Config) { c.Seed = 2 }, "seed"},
		{"sample", func(c *Config) { c.Sample = 30 }, "sample"},
		{"clip", func(c *Config) { c.Clip = 2 }, "clip"},
	} {
		c := cfg
		tc.mutate(&c)
		other := runRounds(t, c, 0)
		err := other.ReadCheckpoint(bytes.NewReader(good))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s changed: ReadCheckpoint error %v, want one naming %q", tc.name, err, tc.want)
		}
	}
	corrupt := bytes.Clone(good)
	corrupt[len(corrupt)/2] ^= 1
	if err := runRounds(t, cfg, 0).ReadCheckpoint(bytes.NewReader(corrupt)); err == nil || !strings.Contains(err.Error(), "corrupt") {
		t.Errorf("corrupted checkpoint: error %v, want corrupt", err)
	}
	if err := runRounds(t, cfg, 0).ReadCheckpoint(strings.NewReader("hello")); err == nil {
		t.Error("garbage accepted as a checkpoint")
	}
	if err := runRounds(t, cfg, 0).ReadCheckpoint(bytes.NewReader(good[:len(good)-5])); err == nil {
		t.Error("truncated checkpoint accepted")
	}
}
