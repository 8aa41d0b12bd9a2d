package event

import (
	"encoding/json"
	"strings"
	"testing"
)

// shuffleGaussianEvents are small instances of the three shuffle Gaussian
// mechanisms, without an adjacency.
var shuffleGaussianEvents = []Event{
	{Mechanism: ShuffleGaussian, N: 1000, Sigma: 3},
	{Mechanism: SubsampledShuffleGaussian, N: 1000, K: 50, Sigma: 1.5},
	{Mechanism: CheckinGaussian, N: 1000, Rate: 0.05, Sigma: 2},
}

func TestAdjacencyValidate(t *testing.T) {
	sg := Event{Mechanism: SampledGaussian, N: 60000, Rate: 0.001, Sigma: 1}
	ldp := Event{Mechanism: SubsampledShuffle, N: 100, K: 10, Eps0: 1}
	with := func(e Event, a string) Event { e.Adjacency = a; return e }
	for _, c := range []struct {
		e    Event
		want string // "" = valid, else a substring of the error
	}{
		{with(sg, ""), ""},
		{with(sg, AdjacencyAddRemove), ""},
		{with(sg, AdjacencyZeroOut), ""},
		{with(sg, AdjacencyReplaceOne), "Poisson sampling"},
		{with(ldp, ""), ""},
		{with(ldp, AdjacencyReplaceOne), ""},
		{with(ldp, AdjacencyZeroOut), "eps0-LDP"},
		{with(ldp, AdjacencyAddRemove), "eps0-LDP"},
		{with(sg, "replace"), "must be one of"},
		{with(ldp, "Replace-One"), "must be one of"},
	} {
		err := c.e.Validate()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.e, err)
		case c.want != "" && err == nil:
			t.Errorf("%s: accepted", c.e)
		case c.want != "" && (!strings.HasPrefix(err.Error(), "--adjacency") || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %q does not start with --adjacency or lacks %q", c.e, err, c.want)
		}
	}
	for _, base := range shuffleGaussianEvents {
		for _, a := range []string{"", AdjacencyReplaceOne, AdjacencyZeroOut} {
			if err := with(base, a).Validate(); err != nil {
				t.Errorf("%s: %v", with(base, a), err)
			}
		}
		for _, a := range []string{AdjacencyAddRemove, "none"} {
			err := with(base, a).Validate()
			if err == nil || !strings.HasPrefix(err.Error(), "--adjacency") {
				t.Errorf("%s: error %v, want one naming --adjacency", with(base, a), err)
			}
		}
	}
}

func TestDefaultAndEffectiveAdjacency(t *testing.T) {
	for _, m := range Mechanisms() {
		want := AdjacencyReplaceOne
		if m == SampledGaussian {
			want = AdjacencyAddRemove
		}
		if got := DefaultAdjacency(m); got != want {
			t.Errorf("DefaultAdjacency(%s) = %s, want %s", m, got, want)
		}
	}
	for _, c := range []struct {
		e    Event
		want string
	}{
		{Event{Mechanism: SubsampledShuffleGaussian}, AdjacencyZeroOut},
		{Event{Mechanism: CheckinGaussian, Adjacency: AdjacencyReplaceOne}, AdjacencyReplaceOne},
		{Event{Mechanism: SampledGaussian}, AdjacencyAddRemove},
		{Event{Mechanism: SampledGaussian, Adjacency: AdjacencyZeroOut}, AdjacencyZeroOut},
		{Event{Mechanism: Shuffle}, AdjacencyReplaceOne},
		{Event{Mechanism: "laplace"}, ""},
	} {
		if got := c.e.EffectiveAdjacency(); got != c.want {
			t.Errorf("%+v: EffectiveAdjacency %q, want %q", c.e, got, c.want)
		}
	}
	// A composition of different relations is stated for zero-out, which
	// every curve bounds.
	ro := shuffleGaussianEvents[1]
	ro.Adjacency = AdjacencyReplaceOne
	if got := ComposedAdjacency([]Composed{{ro, 1}, {shuffleGaussianEvents[1], 1}}); got != AdjacencyZeroOut {
		t.Errorf("ComposedAdjacency of a mixed composition %q, want zero-out", got)
	}
}

func TestAdjacencyJSONAndString(t *testing.T) {
	e := Event{Mechanism: CheckinGaussian, N: 60000, Rate: 0.1, Sigma: 5, Adjacency: AdjacencyReplaceOne}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"mechanism":"checkin-gaussian","n":60000,"sigma":5,"rate":0.1,"adjacency":"replace-one"}`; string(b) != want {
		t.Errorf("JSON %s, want %s", b, want)
	}
	back, err := Parse(b)
	if err != nil || back != e {
		t.Errorf("Parse(%s) = %+v, %v", b, back, err)
	}
	if want := "checkin-gaussian(n=60000, rate=0.1, sigma=5, adjacency=replace-one)"; e.String() != want {
		t.Errorf("String %q, want %q", e, want)
	}
	s := Event{Mechanism: SampledGaussian, Rate: 0.001, Sigma: 6, Adjacency: AdjacencyAddRemove}
	if want := "sampled-gaussian(rate=0.001, sigma=6, adjacency=add-remove)"; s.String() != want {
		t.Errorf("String %q, want %q", s, want)
	}
	if _, err := Parse([]byte(`{"mechanism":"shuffle-gaussian","n":10,"sigma":1,"adjacency":"add-remove"}`)); err == nil ||
		!strings.HasPrefix(err.Error(), "--adjacency") {
		t.Errorf("Parse with add-remove: %v, want an error naming --adjacency", err)
	}
}
