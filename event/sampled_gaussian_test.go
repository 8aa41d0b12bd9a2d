package event

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
)

func TestSampledGaussianValidate(t *testing.T) {
	for _, c := range []struct {
		e    Event
		flag string // "" = valid
	}{
		{Event{Mechanism: SampledGaussian, Rate: 0.004, Sigma: 1.1}, ""},
		{Event{Mechanism: SampledGaussian, N: 60000, Rate: 0.001, Sigma: 6.66}, ""},
		{Event{Mechanism: SampledGaussian, Rate: 1, Sigma: MinSigma}, ""},
		{Event{Mechanism: SampledGaussian, Sigma: 1}, "--rate"},
		{Event{Mechanism: SampledGaussian, Rate: 1.5, Sigma: 1}, "--rate"},
		{Event{Mechanism: SampledGaussian, Rate: -0.1, Sigma: 1}, "--rate"},
		{Event{Mechanism: SampledGaussian, Rate: math.NaN(), Sigma: 1}, "--rate"},
		{Event{Mechanism: SampledGaussian, Rate: 0.1}, "--sigma"},
		{Event{Mechanism: SampledGaussian, Rate: 0.1, Sigma: -1}, "--sigma"},
		{Event{Mechanism: SampledGaussian, Rate: 0.1, Sigma: math.Inf(1)}, "--sigma"},
		{Event{Mechanism: SampledGaussian, Rate: 0.1, Sigma: 1e-300}, "--sigma"},
		{Event{Mechanism: SampledGaussian, Rate: 0.1, Sigma: 1, K: 60}, "--k"},
		{Event{Mechanism: SampledGaussian, Rate: 0.1, Sigma: 1, Eps0: 1}, "--eps0"},
		{Event{Mechanism: SampledGaussian, N: -1, Rate: 0.1, Sigma: 1}, "--n"},
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
	if !slices.Contains(Mechanisms(), SampledGaussian) || !slices.IsSorted(Mechanisms()) {
		t.Errorf("Mechanisms() = %v", Mechanisms())
	}
}

func TestSampledGaussianJSONAndString(t *testing.T) {
	for _, c := range []struct {
		e       Event
		json, s string
	}{
		{Event{Mechanism: SampledGaussian, Rate: 0.004, Sigma: 1.1},
			`{"mechanism":"sampled-gaussian","n":0,"sigma":1.1,"rate":0.004}`, "sampled-gaussian(rate=0.004, sigma=1.1)"},
		{Event{Mechanism: SampledGaussian, N: 60000, Rate: 0.001, Sigma: 6.5},
			`{"mechanism":"sampled-gaussian","n":60000,"sigma":6.5,"rate":0.001}`, "sampled-gaussian(n=60000, rate=0.001, sigma=6.5)"},
	} {
		b, err := json.Marshal(c.e)
		if err != nil || string(b) != c.json {
			t.Errorf("Marshal(%+v) = %s, %v; want %s", c.e, b, err, c.json)
		}
		back, err := Parse(b)
		if err != nil || back != c.e {
			t.Errorf("Parse(%s) = %+v, %v", b, back, err)
		}
		if got := c.e.String(); got != c.s {
			t.Errorf("String() = %q, want %q", got, c.s)
		}
	}
	// n may be omitted in JSON.
	if e, err := Parse([]byte(`{"mechanism":"sampled-gaussian","rate":0.01,"sigma":1}`)); err != nil || e.N != 0 {
		t.Errorf("Parse without n: %+v, %v", e, err)
	}
}
