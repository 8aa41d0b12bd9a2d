package main

import (
	"testing"

	"github.com/shuffledp/shuffledp/training"
)

// TestUpShufflerAdjacency: up starts its shuffler with the run's own
// relation for a Gaussian run (so a zero-out run is not refused by the
// shuffler's replace-one default) and with the shuffler's default otherwise.
func TestUpShufflerAdjacency(t *testing.T) {
	for _, tc := range []struct {
		cfg  training.Config
		want string
	}{
		{training.Config{Randomizer: training.RandomizerGaussian, Adjacency: "zero-out"}, "zero-out"},
		{training.Config{Randomizer: training.RandomizerGaussian, Adjacency: "replace-one"}, "replace-one"},
		{training.Config{Randomizer: training.RandomizerRInf, Adjacency: "replace-one"}, ""},
	} {
		if got := upShufflerAdjacency(tc.cfg); got != tc.want {
			t.Errorf("%s %s: shuffler --adjacency %q, want %q", tc.cfg.Randomizer, tc.cfg.Adjacency, got, tc.want)
		}
	}
}
