package account

import (
	"testing"

	"github.com/shuffledp/shuffledp/accounting"
	"github.com/shuffledp/shuffledp/calibrate"
	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/route"
)

// TestCalibrateAgreesWithRoundEvent: for every round kind, the event
// Calibrate prices at its answer is the event event.RoundEvent builds for
// the round a simulation or a shuffler runs with the calibrated
// parameters (the one their ledgers debit), and the answer's epsilon is
// that event's over the calibrated steps by the same bound, at most the
// target; one more step would exceed it.
func TestCalibrateAgreesWithRoundEvent(t *testing.T) {
	const target, delta = 2.0, 1e-5
	for _, tc := range []struct {
		req   Request
		round event.Round // the round with the calibrated parameters; its adjacency is Calibrate's
	}{
		{Request{Mechanism: event.SubsampledShuffle, N: 200, K: 20, Eps0: 1.5},
			event.Round{Randomizer: "rinf", Participation: event.ParticipationSample, N: 200, Reports: 20, Eps0: 1.5}},
		{Request{Mechanism: event.SubsampledShuffleGaussian, N: 200, K: 20, Sigma: 8},
			event.Round{Randomizer: event.RandomizerGaussian, Participation: event.ParticipationSample, N: 200, Reports: 20, Sigma: 8}},
		{Request{Mechanism: event.CheckinGaussian, N: 30, Rate: 0.2, Sigma: 8, Adjacency: event.AdjacencyZeroOut},
			event.Round{Randomizer: event.RandomizerGaussian, Participation: event.ParticipationCheckIn, N: 30, Rate: 0.2, Sigma: 8}},
		{Request{Mechanism: event.SampledGaussian, N: 60000, Rate: 0.01, Sigma: 1.1},
			event.Round{Randomizer: event.RandomizerCentralGaussian, Participation: event.ParticipationSample, N: 60000, Rate: 0.01, Sigma: 1.1}},
	} {
		t.Run(tc.req.Mechanism, func(t *testing.T) {
			req := tc.req
			req.Bound, req.Delta = BoundRDPBest, delta
			cal, err := Calibrate(req, string(calibrate.Steps), target)
			if err != nil {
				t.Fatal(err)
			}
			round := tc.round
			round.Adjacency = cal.Adjacency
			want, err := event.RoundEvent(round)
			if err != nil {
				t.Fatal(err)
			}
			at := withParam(req, string(calibrate.Steps), cal.Value)
			if got := at.Event(); got != want {
				t.Errorf("Calibrate prices %s; RoundEvent of the run's round is %s", got, want)
			}
			g, err := route.Epsilon([]event.Composed{{Event: want, Count: cal.Steps}}, accounting.BoundBest, delta, nil)
			if err != nil {
				t.Fatal(err)
			}
			if g.Epsilon != cal.Epsilon || cal.Epsilon > target {
				t.Errorf("%d steps: Calibrate says epsilon %v, RoundEvent's event %v (target %v)", cal.Steps, cal.Epsilon, g.Epsilon, target)
			}
			if cal.NextEpsilon == nil || !(*cal.NextEpsilon > target) {
				t.Errorf("steps %d + 1: epsilon %v, want > target", cal.Steps, cal.NextEpsilon)
			}
		})
	}
}
