package training

import (
	"math"
	"strings"
	"testing"
)

// TestApplyGaussian checks what each combination of Gaussian options does
// to a Config: the sigma it sets, and the refusals naming the flag.
func TestApplyGaussian(t *testing.T) {
	opts := GaussianOptions{Sigma: 3, ClientSigma: 0.5, Participation: ParticipationSample, Adjacency: "zero-out"}
	for _, tc := range []struct {
		randomizer string
		given      string // space-separated flags given
		o          GaussianOptions
		sigma      float64
		err        string
	}{
		{"rinf", "", opts, 0, ""},
		{"rinf", "sigma", opts, 0, "sigma applies to --randomizer gaussian"},
		{"r1", "noise-sum", opts, 0, "noise-sum applies"},
		{RandomizerGaussian, "sigma", opts, 3, ""},
		{RandomizerGaussian, "sigma eps0", opts, 0, "eps0 does not apply"},
		{RandomizerGaussian, "", opts, 0, "sigma (noise multiplier) is required"},
		{RandomizerGaussian, "client-sigma", opts, 0, "client-sigma applies to --randomizer central-gaussian"},
		{RandomizerGaussian, "sigma sample", GaussianOptions{Sigma: 1, Participation: ParticipationCheckIn, Rate: 0.1}, 0, "sample does not apply to --participation checkin"},
		{RandomizerCentralGaussian, "client-sigma", opts, 0.5 * math.Sqrt(20), ""},
		{RandomizerCentralGaussian, "client-sigma sigma", opts, 0, "give it or --sigma, not both"},
		{RandomizerCentralGaussian, "sigma sample rate", opts, 0, "give --rate or --sample"},
	} {
		c := Config{Randomizer: tc.randomizer, Clients: 200, Sample: 20, Eps0: 2}
		given := func(f string) bool { return strings.Contains(" "+tc.given+" ", " "+f+" ") }
		err := c.ApplyGaussian(tc.o, given)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s given %q: error %v, want %q", tc.randomizer, tc.given, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s given %q: %v", tc.randomizer, tc.given, err)
			continue
		}
		if math.Abs(c.Sigma-tc.sigma) > 1e-12 || c.Adjacency != tc.o.Adjacency {
			t.Errorf("%s given %q: sigma %g adjacency %q, want %g %q", tc.randomizer, tc.given, c.Sigma, c.Adjacency, tc.sigma, tc.o.Adjacency)
		}
		if gaussian := tc.randomizer != "rinf" && tc.randomizer != "r1"; gaussian != (c.Eps0 == 0) {
			t.Errorf("%s: eps0 %g after ApplyGaussian", tc.randomizer, c.Eps0)
		}
	}
}
