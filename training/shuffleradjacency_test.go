package training

import "testing"

// TestShufflerAdjacency: `shuffledp up` starts its shuffler with the run's own
// relation for a Gaussian run (so a zero-out run is not refused by the
// shuffler's replace-one default) and with the shuffler's default otherwise.
func TestShufflerAdjacency(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Randomizer: RandomizerGaussian, Adjacency: "zero-out"}, "zero-out"},
		{Config{Randomizer: RandomizerGaussian, Adjacency: "replace-one"}, "replace-one"},
		{Config{Randomizer: RandomizerRInf, Adjacency: "replace-one"}, ""},
	} {
		if got := tc.cfg.ShufflerAdjacency(); got != tc.want {
			t.Errorf("%s %s: shuffler --adjacency %q, want %q", tc.cfg.Randomizer, tc.cfg.Adjacency, got, tc.want)
		}
	}
}
