package training

import (
	"math"
	"strings"
	"testing"
)

func TestConfigValidateNamesTheFlag(t *testing.T) {
	tests := []struct {
		flag   string
		mutate func(*Config)
	}{
		{"clients", func(c *Config) { c.Clients = 0 }},
		{"clients", func(c *Config) { c.Clients = math.MaxInt64 }},
		{"clients", func(c *Config) { c.Clients = MaxClients + 1 }},
		{"epochs", func(c *Config) { c.Epochs = 1e300 }}, // plans more than MaxRounds rounds
		{"sample", func(c *Config) { c.Sample = 0 }},
		{"sample", func(c *Config) { c.Sample = c.Clients + 1 }},
		{"randomizer", func(c *Config) { c.Randomizer = "laplace" }},
		{"clip-norm", func(c *Config) { c.ClipNorm = "l3" }},
		{"clip-norm", func(c *Config) { c.Randomizer, c.ClipNorm = RandomizerR1, NormL2 }},
		{"clip-norm", func(c *Config) { c.Randomizer, c.ClipNorm = RandomizerR2, NormLInf }},
		{"clip", func(c *Config) { c.Clip = 0 }},
		{"clip", func(c *Config) { c.Clip = math.Inf(1) }},
		{"clip", func(c *Config) { c.Clip = math.NaN() }},
		{"eps0", func(c *Config) { c.Randomizer, c.Eps0 = RandomizerRInf, 0 }},
		{"eps0", func(c *Config) { c.Randomizer, c.Eps0 = RandomizerRInf, math.NaN() }},
		{"delta", func(c *Config) { c.Delta = 0 }},
		{"delta", func(c *Config) { c.Delta = 1 }},
		{"epochs", func(c *Config) { c.Epochs = 0 }},
		{"epochs", func(c *Config) { c.Epochs = math.Inf(1) }},
		{"lr", func(c *Config) { c.LR = LRSchedule{} }},
		{"target-epsilon", func(c *Config) { c.TargetEpsilon = -1 }},
		{"target-epsilon", func(c *Config) { c.TargetEpsilon = 1 }}, // with randomizer none
		{"eval-every", func(c *Config) { c.EvalEvery = -1 }},
		{"project-radius", func(c *Config) { c.ProjectRadius = -1 }},
		{"workers", func(c *Config) { c.Workers = -1 }},
	}
	for _, tc := range tests {
		c := baseConfig(t)
		tc.mutate(&c)
		err := c.Validate()
		if err == nil || !strings.HasPrefix(err.Error(), tc.flag) {
			t.Errorf("want an error starting with %q, got %v", tc.flag, err)
		}
	}
	// Accepted: defaults filled in, smaller-ball clipping allowed.
	for _, tc := range []struct{ randomizer, norm, want string }{
		{RandomizerRInf, "", NormLInf}, {RandomizerR1, "", NormL1}, {RandomizerR2, "", NormL2},
		{RandomizerNone, "", NormL2}, {RandomizerRInf, NormL2, NormL2}, {RandomizerR2, NormL1, NormL1},
		{RandomizerPrivUnit, "", NormL2},
	} {
		c := baseConfig(t)
		c.Randomizer, c.ClipNorm, c.Eps0 = tc.randomizer, tc.norm, 1
		if err := c.Validate(); err != nil || c.ClipNorm != tc.want || c.Workers < 1 {
			t.Errorf("%s/%q: err %v, clip norm %q (want %q), workers %d", tc.randomizer, tc.norm, err, c.ClipNorm, tc.want, c.Workers)
		}
	}
}

func TestRoundsAndEpochs(t *testing.T) {
	c := Config{Clients: 60000, Sample: 10000, Epochs: 200}
	if got := c.TotalRounds(); got != 1200 {
		t.Errorf("TotalRounds = %d, want 1200", got)
	}
	if c.EpochOf(5) != 0 || c.EpochOf(6) != 1 || c.EpochOf(419) != 69 || c.EpochOf(420) != 70 {
		t.Errorf("EpochOf wrong: %d %d %d %d", c.EpochOf(5), c.EpochOf(6), c.EpochOf(419), c.EpochOf(420))
	}
	c = Config{Clients: 60000, Sample: 7000, Epochs: 1} // 8.57 rounds per epoch
	if got := c.TotalRounds(); got != 9 {
		t.Errorf("TotalRounds = %d, want 9", got)
	}
	c = Config{Clients: 100, Sample: 10, Epochs: 0.25}
	if got := c.TotalRounds(); got != 3 {
		t.Errorf("TotalRounds = %d, want 3", got)
	}
}
