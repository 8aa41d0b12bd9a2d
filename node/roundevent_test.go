package node

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/shuffledp/shuffledp/data"
	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/model"
	"github.com/shuffledp/shuffledp/training"
)

// TestRoundEventSimulationAndDeployment feeds every round kind through
// both paths that debit a round: the simulation (a training run in one
// process, whose ledger entries are what it debited) and the deployment
// (the run configuration the server publishes, through its protobuf form
// and the checks the shuffler applies to it, priced the way the shuffler
// debits each batch: protocol.RunConfig.Round, event.Round.Event). For
// each entry of the simulation, the deployment's event for the same batch
// size is the same event, field by field and as JSON, and both are the
// event written out here by hand. central-gaussian runs in simulation only,
// and the deployment refuses it.
func TestRoundEventSimulationAndDeployment(t *testing.T) {
	const n = 20
	for _, tc := range []struct {
		name  string
		train func(*training.Config)
		want  func(reports int) event.Event
		// networked is false for a round kind the deployment refuses.
		networked bool
	}{
		{"rinf k of n", func(c *training.Config) {}, func(k int) event.Event {
			return event.Event{Mechanism: event.SubsampledShuffle, N: n, K: int64(k), Eps0: 2}
		}, true},
		{"r2 k of n, replace-one spelled out", func(c *training.Config) {
			c.Randomizer, c.Eps0, c.Adjacency, c.ClipNorm = training.RandomizerR2, 3, event.AdjacencyReplaceOne, "l2"
		}, func(k int) event.Event {
			return event.Event{Mechanism: event.SubsampledShuffle, N: n, K: int64(k), Eps0: 3}
		}, true},
		{"gaussian k of n", func(c *training.Config) {
			c.Randomizer, c.Eps0, c.Sigma, c.Clip = training.RandomizerGaussian, 0, 4, 1
		}, func(k int) event.Event {
			return event.Event{Mechanism: event.SubsampledShuffleGaussian, N: n, K: int64(k), Sigma: 4, Adjacency: event.AdjacencyReplaceOne}
		}, true},
		{"gaussian k of n, zero-out", func(c *training.Config) {
			c.Randomizer, c.Eps0, c.Sigma, c.Clip, c.Adjacency = training.RandomizerGaussian, 0, 4, 1, event.AdjacencyZeroOut
		}, func(k int) event.Event {
			return event.Event{Mechanism: event.SubsampledShuffleGaussian, N: n, K: int64(k), Sigma: 4, Adjacency: event.AdjacencyZeroOut}
		}, true},
		{"gaussian check-in", func(c *training.Config) {
			c.Randomizer, c.Eps0, c.Sigma, c.Clip = training.RandomizerGaussian, 0, 4, 1
			c.Participation, c.Rate, c.Sample, c.Epochs = training.ParticipationCheckIn, 0.9, 0, 1.8
		}, func(int) event.Event {
			return event.Event{Mechanism: event.CheckinGaussian, N: n, Rate: 0.9, Sigma: 4, Adjacency: event.AdjacencyReplaceOne}
		}, true},
		{"gaussian check-in, zero-out", func(c *training.Config) {
			c.Randomizer, c.Eps0, c.Sigma, c.Clip, c.Adjacency = training.RandomizerGaussian, 0, 4, 1, event.AdjacencyZeroOut
			c.Participation, c.Rate, c.Sample, c.Epochs = training.ParticipationCheckIn, 0.9, 0, 1.8
		}, func(int) event.Event {
			return event.Event{Mechanism: event.CheckinGaussian, N: n, Rate: 0.9, Sigma: 4, Adjacency: event.AdjacencyZeroOut}
		}, true},
		{"central-gaussian", func(c *training.Config) {
			c.Randomizer, c.Eps0, c.Sigma, c.Clip = training.RandomizerCentralGaussian, 0, 1.5, 1
			c.Rate, c.Sample, c.Epochs = 0.25, 0, 0.5
		}, func(int) event.Event {
			return event.Event{Mechanism: event.SampledGaussian, N: n, Rate: 0.25, Sigma: 1.5, Adjacency: event.AdjacencyAddRemove}
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lr, err := training.ParseLRSchedule("0.3")
			if err != nil {
				t.Fatal(err)
			}
			cfg := training.Config{Clients: n, Sample: 5, Randomizer: training.RandomizerRInf, Clip: 0.01, Eps0: 2, Delta: 1e-5,
				Epochs: 0.5, LR: lr, Seed: 1, Workers: 1}
			tc.train(&cfg)
			if err := cfg.Validate(); err != nil {
				t.Fatal(err)
			}
			m, err := model.New("logreg", 784, 10)
			if err != nil {
				t.Fatal(err)
			}
			tr, err := training.New(cfg, m, data.Synthetic(50, 2), nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tr.Run(context.Background(), training.Hooks{}); err != nil {
				t.Fatal(err)
			}
			entries := tr.Ledger().Entries()
			if len(entries) < 2 {
				t.Fatalf("the simulation debited %d rounds, want at least 2", len(entries))
			}

			if !tc.networked {
				if err := cfg.CheckNetworked(); err == nil {
					t.Fatal("the deployment accepts a round kind it should refuse")
				}
				for _, e := range entries {
					if want := tc.want(e.Reports); e.Event != want {
						t.Errorf("simulation round %d: %+v, want %+v", e.Round, e.Event, want)
					}
				}
				return
			}
			if err := cfg.CheckNetworked(); err != nil {
				t.Fatal(err)
			}
			run, err := runConfigFromPB(runConfigToPB(tr.RunConfig()))
			if err != nil {
				t.Fatalf("the shuffler refuses the published run: %v", err)
			}
			for _, e := range entries {
				dep := run.Round(e.Reports).Event()
				simJSON, err1 := json.Marshal(e.Event)
				depJSON, err2 := json.Marshal(dep)
				if err1 != nil || err2 != nil || e.Event != dep || string(simJSON) != string(depJSON) {
					t.Errorf("round %d (%d reports): simulation %s, deployment %s", e.Round, e.Reports, simJSON, depJSON)
				}
				if want := tc.want(e.Reports); dep != want {
					t.Errorf("round %d: %+v, want %+v", e.Round, dep, want)
				}
			}
		})
	}
}
