package event

import (
	"strings"
	"testing"
)

// Every round kind gives the event of its row in RoundEvent's table,
// written out here by hand; the fields the kind does not use are dropped,
// and Round.Event agrees.
func TestRoundEvent(t *testing.T) {
	for _, tc := range []struct {
		name  string
		round Round
		want  Event
	}{
		{"eps0-LDP k of n",
			Round{Randomizer: "rinf", Participation: ParticipationSample, N: 60000, Reports: 10000, Eps0: 1.5},
			Event{Mechanism: SubsampledShuffle, N: 60000, K: 10000, Eps0: 1.5}},
		{"eps0-LDP, participation empty, replace-one spelled out",
			Round{Randomizer: "r2", N: 20, Reports: 5, Eps0: 2, Adjacency: AdjacencyReplaceOne},
			Event{Mechanism: SubsampledShuffle, N: 20, K: 5, Eps0: 2}},
		{"eps0-LDP, k = n",
			Round{Randomizer: "privunit", Participation: ParticipationSample, N: 20, Reports: 20, Eps0: 2},
			Event{Mechanism: SubsampledShuffle, N: 20, K: 20, Eps0: 2}},
		{"gaussian k of n",
			Round{Randomizer: RandomizerGaussian, Participation: ParticipationSample, N: 1000, Reports: 100, Sigma: 5, Adjacency: AdjacencyReplaceOne},
			Event{Mechanism: SubsampledShuffleGaussian, N: 1000, K: 100, Sigma: 5, Adjacency: AdjacencyReplaceOne}},
		{"gaussian k of n, no adjacency (legacy)",
			Round{Randomizer: RandomizerGaussian, N: 1000, Reports: 100, Sigma: 5},
			Event{Mechanism: SubsampledShuffleGaussian, N: 1000, K: 100, Sigma: 5}},
		{"gaussian check-in: the realized batch is not used",
			Round{Randomizer: RandomizerGaussian, Participation: ParticipationCheckIn, N: 60000, Reports: 5987, Sigma: 2, Rate: 0.1, Adjacency: AdjacencyZeroOut},
			Event{Mechanism: CheckinGaussian, N: 60000, Rate: 0.1, Sigma: 2, Adjacency: AdjacencyZeroOut}},
		{"central-gaussian (Poisson sampling)",
			Round{Randomizer: RandomizerCentralGaussian, Participation: ParticipationSample, N: 60000, Reports: 611, Sigma: 1.1, Rate: 0.01, Adjacency: AdjacencyAddRemove},
			Event{Mechanism: SampledGaussian, N: 60000, Rate: 0.01, Sigma: 1.1, Adjacency: AdjacencyAddRemove}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := RoundEvent(tc.round)
			if err != nil || got != tc.want {
				t.Fatalf("RoundEvent(%+v) = %+v, %v; want %+v", tc.round, got, err, tc.want)
			}
			if e := tc.round.Event(); e != tc.want {
				t.Errorf("Round.Event = %+v, want %+v", e, tc.want)
			}
		})
	}
}

// A round without a privacy event, or whose event is invalid, is an error
// naming the flag; Round.Event gives the zero Event, which does not
// validate (so no ledger debits it).
func TestRoundEventRefuses(t *testing.T) {
	for _, tc := range []struct {
		round Round
		want  string
	}{
		{Round{N: 20, Reports: 5, Eps0: 2}, "--randomizer must not be empty"},
		{Round{Randomizer: RandomizerNone, N: 20, Reports: 5}, "--randomizer none"},
		{Round{Randomizer: "rinf", Participation: ParticipationCheckIn, N: 20, Rate: 0.5, Eps0: 2}, "--participation checkin needs --randomizer gaussian"},
		{Round{Randomizer: RandomizerCentralGaussian, Participation: ParticipationCheckIn, N: 20, Rate: 0.5, Sigma: 1}, "--participation checkin needs --randomizer gaussian"},
		{Round{Randomizer: "rinf", Participation: "poisson", N: 20, Reports: 5, Eps0: 2}, "--participation must be"},
		{Round{Randomizer: "rinf", N: 20, Reports: 5, Eps0: 2, Adjacency: AdjacencyZeroOut}, "--adjacency zero-out does not apply"},
		{Round{Randomizer: "rinf", N: 20, Reports: 0, Eps0: 2}, "--k"},
		{Round{Randomizer: "rinf", N: 20, Reports: 21, Eps0: 2}, "--k"},
		{Round{Randomizer: RandomizerGaussian, N: 20, Reports: 5}, "--sigma"},
		{Round{Randomizer: RandomizerGaussian, Participation: ParticipationCheckIn, N: 20, Sigma: 1, Rate: 1.5}, "--rate"},
		{Round{Randomizer: RandomizerCentralGaussian, N: 20, Sigma: 1, Rate: 0.1, Adjacency: AdjacencyReplaceOne}, "replace-one"},
	} {
		_, err := RoundEvent(tc.round)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("RoundEvent(%+v): %v, want an error containing %q", tc.round, err, tc.want)
		}
		if e := tc.round.Event(); e != (Event{}) || e.Validate() == nil {
			t.Errorf("Round.Event(%+v) = %+v, want the zero Event, which does not validate", tc.round, e)
		}
	}
}

// RoundOf inverts RoundEvent: for every round kind, RoundEvent(RoundOf(e))
// is e and CheckRoundEvent accepts it; an event of no round (no
// subsampling), or one with a field its round kind does not carry, is
// refused by CheckRoundEvent.
func TestRoundOfInvertsRoundEvent(t *testing.T) {
	for _, r := range []Round{
		{Randomizer: "rinf", N: 60000, Reports: 10000, Eps0: 1.5},
		{Randomizer: RandomizerGaussian, N: 1000, Reports: 100, Sigma: 5, Adjacency: AdjacencyReplaceOne},
		{Randomizer: RandomizerGaussian, N: 1000, Reports: 100, Sigma: 5},
		{Randomizer: RandomizerGaussian, Participation: ParticipationCheckIn, N: 60000, Sigma: 2, Rate: 0.1, Adjacency: AdjacencyZeroOut},
		{Randomizer: RandomizerCentralGaussian, N: 60000, Sigma: 1.1, Rate: 0.01, Adjacency: AdjacencyAddRemove},
	} {
		e, err := RoundEvent(r)
		if err != nil {
			t.Fatal(err)
		}
		back, err := RoundOf(e)
		if err != nil {
			t.Fatalf("RoundOf(%s): %v", e, err)
		}
		if again, err := RoundEvent(back); err != nil || again != e {
			t.Errorf("RoundEvent(RoundOf(%s)) = %s, %v", e, again, err)
		}
		if err := CheckRoundEvent(e); err != nil {
			t.Errorf("CheckRoundEvent(%s): %v", e, err)
		}
	}
	for _, e := range []Event{
		{Mechanism: Shuffle, N: 100, Eps0: 1},
		{Mechanism: ShuffleGaussian, N: 100, Sigma: 1, Adjacency: AdjacencyReplaceOne},
		{Mechanism: CheckinGaussian, N: 1000, K: 10, Rate: 0.01, Sigma: 4, Adjacency: AdjacencyReplaceOne},
		{Mechanism: SubsampledShuffle, N: 100, K: 10, Eps0: 1, Adjacency: AdjacencyReplaceOne},
		{Mechanism: SubsampledShuffle, N: 100, K: 10, Eps0: 1, Sigma: 3},
	} {
		if err := CheckRoundEvent(e); err == nil {
			t.Errorf("CheckRoundEvent(%+v) accepted an event no round debits", e)
		}
	}
}

// A round that names its mechanism (the accountant's question) gives that
// mechanism with every parameter copied: for each round kind, naming the
// mechanism RoundEvent derived, with the parameters the kind uses, gives
// the same event; an unused parameter is named by Validate; naming both a
// mechanism and a randomizer is refused.
func TestRoundEventNamedMechanism(t *testing.T) {
	for _, r := range []Round{
		{Randomizer: "rinf", Participation: ParticipationSample, N: 60000, Reports: 10000, Eps0: 1.5},
		{Randomizer: RandomizerGaussian, N: 1000, Reports: 100, Sigma: 5, Adjacency: AdjacencyReplaceOne},
		{Randomizer: RandomizerGaussian, Participation: ParticipationCheckIn, N: 60000, Sigma: 2, Rate: 0.1, Adjacency: AdjacencyZeroOut},
		{Randomizer: RandomizerCentralGaussian, N: 60000, Sigma: 1.1, Rate: 0.01, Adjacency: AdjacencyAddRemove},
	} {
		want, err := RoundEvent(r)
		if err != nil {
			t.Fatal(err)
		}
		named := Round{Mechanism: want.Mechanism, N: want.N, Reports: want.K, Eps0: want.Eps0, Sigma: want.Sigma, Rate: want.Rate, Adjacency: want.Adjacency}
		if got, err := RoundEvent(named); err != nil || got != want {
			t.Errorf("RoundEvent(%+v) = %+v, %v; want %+v", named, got, err, want)
		}
	}
	if e, err := RoundEvent(Round{Mechanism: Shuffle, N: 2000, Eps0: 0.5}); err != nil || e != (Event{Mechanism: Shuffle, N: 2000, Eps0: 0.5}) {
		t.Errorf("shuffle: %+v, %v", e, err)
	}
	for _, tc := range []struct {
		round Round
		want  string
	}{
		{Round{Mechanism: ShuffleGaussian, N: 1000, Sigma: 2, Eps0: 1}, "--eps0"},
		{Round{Mechanism: SubsampledShuffle, Randomizer: "rinf", N: 20, Reports: 5, Eps0: 2}, "not both"},
		{Round{Mechanism: "nope", N: 20}, "nope"},
	} {
		if _, err := RoundEvent(tc.round); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("RoundEvent(%+v): %v, want an error containing %q", tc.round, err, tc.want)
		}
	}
}
