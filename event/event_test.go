package event

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	for _, c := range []struct {
		e    Event
		flag string // "" = valid
	}{
		{Event{Mechanism: SubsampledShuffle, N: 60000, K: 10000, Eps0: 1.5}, ""},
		{Event{Mechanism: SubsampledShuffle, N: 1, K: 1}, ""}, // eps0 = 0: perfectly private reports
		{Event{Mechanism: Shuffle, N: 1000, Eps0: 2}, ""},
		{Event{Mechanism: Shuffle, N: 1000, K: 1000, Eps0: 2}, ""},
		{Event{Mechanism: ShuffleGaussian, N: 60000, Sigma: 9.48}, ""},
		{Event{Mechanism: ShuffleGaussian, N: 60000, K: 60000, Sigma: 9.48}, ""},
		{Event{Mechanism: SubsampledShuffleGaussian, N: 60000, K: 600, Sigma: 2}, ""},
		{Event{Mechanism: CheckinGaussian, N: 60000, Rate: 0.1, Sigma: 5}, ""},
		{Event{Mechanism: CheckinGaussian, N: 60000, Rate: 1, Sigma: 5}, ""},

		{Event{}, "--mechanism"},
		{Event{Mechanism: "laplace", N: 10}, "--mechanism"},
		{Event{Mechanism: Shuffle, N: 0, Eps0: 1}, "--n"},
		{Event{Mechanism: SubsampledShuffle, N: -5, K: 1, Eps0: 1}, "--n"},
		{Event{Mechanism: SubsampledShuffle, N: 10, K: 0, Eps0: 1}, "--k"},
		{Event{Mechanism: SubsampledShuffle, N: 10, K: 11, Eps0: 1}, "--k"},
		{Event{Mechanism: SubsampledShuffle, N: 10, K: 5, Eps0: -1}, "--eps0"},
		{Event{Mechanism: SubsampledShuffle, N: 10, K: 5, Eps0: math.NaN()}, "--eps0"},
		{Event{Mechanism: Shuffle, N: 10, Eps0: math.Inf(1)}, "--eps0"},
		{Event{Mechanism: Shuffle, N: 10, K: 5, Eps0: 1}, "--k"},
		{Event{Mechanism: Shuffle, N: 10, Eps0: 1, Sigma: 2}, "--sigma"},
		{Event{Mechanism: SubsampledShuffle, N: 10, K: 5, Eps0: 1, Rate: 0.5}, "--rate"},
		{Event{Mechanism: ShuffleGaussian, N: 10}, "--sigma"},
		{Event{Mechanism: ShuffleGaussian, N: 10, Sigma: -1}, "--sigma"},
		{Event{Mechanism: ShuffleGaussian, N: 10, Sigma: math.NaN()}, "--sigma"},
		{Event{Mechanism: ShuffleGaussian, N: 10, Sigma: math.Inf(1)}, "--sigma"},
		{Event{Mechanism: ShuffleGaussian, N: 10, Sigma: 1e-300}, "--sigma"}, // 1/sigma^2 overflows
		{Event{Mechanism: ShuffleGaussian, N: 10, Sigma: MinSigma}, ""},
		{Event{Mechanism: ShuffleGaussian, N: 10, Sigma: 1, Eps0: 1}, "--eps0"},
		{Event{Mechanism: ShuffleGaussian, N: 10, Sigma: 1, K: 3}, "--k"},
		{Event{Mechanism: ShuffleGaussian, N: 10, Sigma: 1, Rate: 0.5}, "--rate"},
		{Event{Mechanism: SubsampledShuffleGaussian, N: 10, Sigma: 1}, "--k"},
		{Event{Mechanism: SubsampledShuffleGaussian, N: 10, K: 20, Sigma: 1}, "--k"},
		{Event{Mechanism: SubsampledShuffleGaussian, N: 10, K: 2, Sigma: 1, Rate: 0.2}, "--rate"},
		{Event{Mechanism: CheckinGaussian, N: 10, Sigma: 1}, "--rate"},
		{Event{Mechanism: CheckinGaussian, N: 10, Sigma: 1, Rate: 1.5}, "--rate"},
		{Event{Mechanism: CheckinGaussian, N: 10, Sigma: 1, Rate: -0.1}, "--rate"},
		{Event{Mechanism: CheckinGaussian, N: 10, Sigma: 1, Rate: math.NaN()}, "--rate"},
		{Event{Mechanism: CheckinGaussian, N: 10, Sigma: 1, Rate: 0.1, K: 2}, "--k"},
	} {
		err := c.e.Validate()
		switch {
		case c.flag == "" && err != nil:
			t.Errorf("%s: %v", c.e, err)
		case c.flag != "" && err == nil:
			t.Errorf("%s: accepted, want an error naming %s", c.e, c.flag)
		case c.flag != "" && !strings.HasPrefix(err.Error(), c.flag):
			t.Errorf("%s: error %q does not start with %s", c.e, err, c.flag)
		}
	}
}

func TestJSONRoundTrip(t *testing.T) {
	for _, c := range []struct {
		e    Event
		json string
	}{
		{Event{Mechanism: SubsampledShuffle, N: 60000, K: 10000, Eps0: 1.5}, `{"mechanism":"subsampled-shuffle","n":60000,"k":10000,"eps0":1.5}`},
		{Event{Mechanism: Shuffle, N: 7}, `{"mechanism":"shuffle","n":7}`},
		{Event{Mechanism: ShuffleGaussian, N: 60000, Sigma: 9.48}, `{"mechanism":"shuffle-gaussian","n":60000,"sigma":9.48}`},
		{Event{Mechanism: SubsampledShuffleGaussian, N: 60000, K: 600, Sigma: math.Nextafter(0.3, 1)}, `{"mechanism":"subsampled-shuffle-gaussian","n":60000,"k":600,"sigma":0.30000000000000004}`},
		{Event{Mechanism: CheckinGaussian, N: 60000, Rate: 0.1, Sigma: 5}, `{"mechanism":"checkin-gaussian","n":60000,"sigma":5,"rate":0.1}`},
	} {
		b, err := json.Marshal(c.e)
		if err != nil || string(b) != c.json {
			t.Errorf("%s: marshal %s (%v), want %s", c.e, b, err, c.json)
		}
		got, err := Parse(b)
		if err != nil || got != c.e {
			t.Errorf("%s: round trip %+v (%v)", c.e, got, err)
		}
		cs := []Composed{{Event: c.e, Count: 3}}
		b, _ = json.Marshal(cs)
		var back []Composed
		if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, cs) {
			t.Errorf("Composed round trip: %s -> %+v (%v)", b, back, err)
		}
	}
	for _, bad := range []string{
		`{"mechanism":"shuffle","n":7,"eps":1}`,                // unknown field
		`{"mechanism":"shuffle","n":7}{"mechanism":"shuffle"}`, // trailing data
		`{"mechanism":"shuffle","n":0}`,                        // invalid
		`{"mechanism":"shuffle","n":7.5}`,                      // not an integer
		`[]`,
	} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("Parse(%s) accepted", bad)
		}
	}
}

func TestString(t *testing.T) {
	for e, want := range map[Event]string{
		{Mechanism: SubsampledShuffle, N: 60000, K: 10000, Eps0: 1.5}:     "subsampled-shuffle(n=60000, k=10000, eps0=1.5)",
		{Mechanism: Shuffle, N: 100, K: 100}:                              "shuffle(n=100, eps0=0)",
		{Mechanism: CheckinGaussian, N: 10, Rate: 0.25, Sigma: 2}:         "checkin-gaussian(n=10, rate=0.25, sigma=2)",
		{Mechanism: SubsampledShuffleGaussian, N: 10, K: 3, Sigma: 0.5}:   "subsampled-shuffle-gaussian(n=10, k=3, sigma=0.5)",
		{Mechanism: ShuffleGaussian, N: 10, Sigma: 1, Eps0: 2, Rate: 0.5}: "shuffle-gaussian(n=10, rate=0.5, eps0=2, sigma=1)",
	} {
		if got := e.String(); got != want {
			t.Errorf("%+v: %q, want %q", e, got, want)
		}
	}
}
