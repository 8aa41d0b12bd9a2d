package account

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/shuffledp/shuffledp/event"
)

// ParseRequest keeps Defaults for absent keys (and nulls), marks present
// keys given, and reads counts in float notation, delta as a quotient and
// orders as a string or an array.
func TestParseRequest(t *testing.T) {
	r, err := ParseRequest([]byte(`{"mechanism":"shuffle","n":1e3,"eps0":1,"delta":"1/60000","orders":[2,3,4],"k":null}`))
	if err != nil {
		t.Fatal(err)
	}
	d := Defaults()
	if r.Mechanism != "shuffle" || r.N != 1000 || r.Eps0 != 1 || r.Delta != 1.0/60000 || r.K != d.K || r.Steps != d.Steps || r.Bound != d.Bound {
		t.Errorf("ParseRequest: %+v", r)
	}
	if !reflect.DeepEqual(r.Orders, []float64{2, 3, 4}) {
		t.Errorf("orders %v", r.Orders)
	}
	for flag, want := range map[string]bool{"mechanism": true, "n": true, "eps0": true, "delta": true, "orders": true, "k": false, "steps": false, "bound": false} {
		if r.Given(flag) != want {
			t.Errorf("Given(%q) = %v, want %v", flag, !want, want)
		}
	}
	s, err := ParseRequest([]byte(`{"orders":"2,3,4"}`))
	if err != nil || !reflect.DeepEqual(s.Orders, r.Orders) {
		t.Errorf("orders as a string: %v, %v", s.Orders, err)
	}
}

// Every malformed request is an error naming the parameter.
func TestParseRequestRefuses(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`[1]`, "not a JSON object"},
		{`null`, "not a JSON object"},
		{`{}0`, "trailing data"},
		{`{"nn":1}`, `unknown parameter "nn"`},
		{`{"n":1.5}`, "--n: 1.5 is not an integer"},
		{`{"steps":"x"}`, "--steps"},
		{`{"delta":"1/0"}`, "--delta"},
		{`{"eps0":"one"}`, "--eps0"},
		{`{"orders":"x"}`, "--orders"},
		{`{"orders":{}}`, "--orders"},
		{`{"mechanism":3}`, "--mechanism"},
	} {
		if _, err := ParseRequest([]byte(tc.in)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseRequest(%s): %v, want an error containing %q", tc.in, err, tc.want)
		}
	}
}

// EvaluateJSON gives the bytes of Evaluate's answer for the same request
// written as a struct (the command's path), and the errors of Validate and
// of the event, naming the flag.
func TestEvaluateJSON(t *testing.T) {
	given := func(names ...string) func(string) bool {
		return func(f string) bool { return strings.Contains(" "+strings.Join(names, " ")+" ", " "+f+" ") }
	}
	for _, tc := range []struct {
		json string
		req  Request
	}{
		{`{"mechanism":"shuffle","n":200,"eps0":0.5,"steps":2,"delta":1e-6,"bound":"all"}`,
			Request{Mechanism: "shuffle", Bound: BoundAll, N: 200, K: 1000, Eps0: 0.5, Steps: 2, Delta: 1e-6, Given: given("mechanism", "n", "eps0", "steps", "delta", "bound")}},
		{`{"mechanism":"sampled-gaussian","n":60000,"k":600,"sigma":1.1,"steps":100,"delta":1e-5}`,
			Request{Mechanism: event.SampledGaussian, Bound: "best", N: 60000, K: 600, Eps0: 2, Sigma: 1.1, Steps: 100, Delta: 1e-5, Given: given("mechanism", "n", "k", "sigma", "steps", "delta")}},
	} {
		got, err := EvaluateJSON([]byte(tc.json))
		if err != nil {
			t.Fatal(err)
		}
		a, err := Evaluate(tc.req)
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		if err := a.WriteJSON(&want); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want.Bytes()) {
			t.Errorf("%s:\n%s\nwant\n%s", tc.json, got, want.Bytes())
		}
	}
	for _, tc := range []struct{ in, want string }{
		{`{"delta":0}`, "--delta must be in (0,1), got 0"},
		{`{"n":0}`, "--n must be >= 1, got 0"},
		{`{"steps":-1}`, "--steps must be >= 0, got -1"},
		{`{"eps0":-1}`, "--eps0 must be a finite number >= 0, got -1"},
		{`{"mechanism":"shuffle-gaussian","n":100,"sigma":2,"eps0":1}`, "--eps0"},
		{`{"k":2000,"n":1000}`, "--k"},
		{`{"bound":"nope","steps":1}`, `--bound "nope" does not apply to --mechanism subsampled-shuffle; use one of`},
	} {
		if _, err := EvaluateJSON([]byte(tc.in)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("EvaluateJSON(%s): %v, want an error containing %q", tc.in, err, tc.want)
		}
	}
}

// A request with a nil Given counts the non-zero fields as given: the
// event of a struct literal carries exactly the parameters set.
func TestNilGiven(t *testing.T) {
	r := Request{Mechanism: event.Shuffle, N: 2000, Eps0: 0.5, Steps: 3, Delta: 1e-6}
	if e := r.Event(); e != (event.Event{Mechanism: event.Shuffle, N: 2000, Eps0: 0.5}) {
		t.Errorf("Event() = %+v", e)
	}
	a, err := Evaluate(r)
	if err != nil || len(a.Rows) != 1 || a.Rows[0].Bound != "" && a.Rows[0].Bound != "best" {
		t.Fatalf("Evaluate: %+v, %v", a, err)
	}
	r.K = 5 // given, and not used by shuffle
	if _, err := Evaluate(r); err == nil || !strings.Contains(err.Error(), "--k") {
		t.Errorf("k given to shuffle: %v", err)
	}
}
