package protocol

import (
	"strings"
	"testing"
)

// TestRunConfigGaussianFields: the Gaussian randomizer needs sigma and no
// eps0; sigma and rate are refused where they do not apply; check-in needs
// a rate in (0, 1]; NewRandomizer builds the Gaussian randomizer with the
// run's sigma and clip.
func TestRunConfigGaussianFields(t *testing.T) {
	base := RunConfig{Run: "r", Model: "logreg", Dim: 4, Randomizer: RandomizerGaussian, ClipNorm: NormL2, Clip: 0.5,
		Sigma: 2, Population: 10, PerRound: 5, MinBatch: 1, ReportBytes: 33}
	if err := base.Validate(); err != nil {
		t.Fatal(err)
	}
	r, err := NewRandomizer(base)
	if err != nil || r.Name() != "gaussian" || r.Radius() != 0.5 || r.ReportSize() != 33 {
		t.Fatalf("NewRandomizer: %v, %v", r, err)
	}
	for _, tc := range []struct {
		flag   string
		mutate func(*RunConfig)
	}{
		{"sigma", func(c *RunConfig) { c.Sigma = 0 }},
		{"sigma", func(c *RunConfig) { c.Randomizer, c.Eps0 = "rinf", 1 }},
		{"participation", func(c *RunConfig) { c.Participation = "all" }},
		{"rate", func(c *RunConfig) { c.Participation = ParticipationCheckIn }},
		{"rate", func(c *RunConfig) { c.Participation, c.Rate = ParticipationCheckIn, 2 }},
		{"rate", func(c *RunConfig) { c.Rate = 0.5 }},
	} {
		c := base
		tc.mutate(&c)
		if err := c.Validate(); err == nil || !strings.HasPrefix(err.Error(), tc.flag) {
			t.Errorf("want an error starting with %q, got %v", tc.flag, err)
		}
	}
	c := base
	c.Participation, c.Rate = ParticipationCheckIn, 0.5
	if err := c.Validate(); err != nil {
		t.Errorf("check-in at rate 0.5: %v", err)
	}
}
