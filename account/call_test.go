package account

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/route"
)

// callResult decodes Call's response, failing on an error.
func callResult(t *testing.T, method, req string, v any) {
	t.Helper()
	var env struct {
		Result json.RawMessage
		Error  *string
	}
	out := Call(method, []byte(req))
	if err := json.Unmarshal(out, &env); err != nil {
		t.Fatalf("%s %s: %v\n%s", method, req, err, out)
	}
	if env.Error != nil {
		t.Fatalf("%s %s: error %s", method, req, *env.Error)
	}
	if err := json.Unmarshal(env.Result, v); err != nil {
		t.Fatal(err)
	}
}

// callError returns Call's error message ("" if none).
func callError(method, req string) string {
	var env struct{ Error string }
	_ = json.Unmarshal(Call(method, []byte(req)), &env)
	return env.Error
}

// Call's methods give what the Go functions give: account the Output of
// EvaluateJSON, epsilon route.Best's epsilon and winner, delta the inverse
// of epsilon on the RDP route, event the parsed event; errors are the
// functions' messages.
func TestCall(t *testing.T) {
	req := `{"mechanism":"shuffle","n":2000,"eps0":0.5,"steps":3,"delta":1e-6,"bound":"ccs21-upper2"}`
	var got, want map[string]any
	callResult(t, "account", req, &got)
	b, err := EvaluateJSON([]byte(req))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	gj, _ := json.Marshal(got)
	wj, _ := json.Marshal(want)
	if string(gj) != string(wj) {
		t.Errorf("account: %s, EvaluateJSON %s", gj, wj)
	}

	e := event.Event{Mechanism: event.SubsampledShuffle, N: 60000, K: 600, Eps0: 1}
	events := []event.Composed{{Event: e, Count: 100}}
	ev, _ := json.Marshal(events)
	var s Statement
	callResult(t, "epsilon", `{"events":`+string(ev)+`,"delta":1e-5}`, &s)
	best, err := route.Best(events, 1e-5, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Epsilon != best.Epsilon || s.Winner != best.Winner || s.Route != best.Route || s.Rounds != 100 || s.Kind != "upper" {
		t.Errorf("epsilon: %+v, route.Best %+v", s, best)
	}
	var r Statement
	callResult(t, "epsilon", `{"events":`+string(ev)+`,"delta":1e-5,"bound":"rdp-best"}`, &r)
	var d Statement
	callResult(t, "delta", `{"events":`+string(ev)+`,"epsilon":`+strconvG(r.Epsilon)+`}`, &d)
	if !(d.Delta > 1e-6 && d.Delta <= 1e-5*(1+1e-9)) {
		t.Errorf("delta at the RDP epsilon %g of delta 1e-5: %g", r.Epsilon, d.Delta)
	}
	var iv Interval
	callResult(t, "certified", `{"events":`+string(ev)+`,"delta":1e-5}`, &iv)
	if !(iv.Lower > 0 && iv.Lower <= iv.Upper && iv.Upper == best.Epsilon) {
		t.Errorf("certified: %+v (best %g)", iv, best.Epsilon)
	}
	var parsed event.Event
	callResult(t, "event", `{"mechanism":"subsampled-shuffle","n":60000,"k":600,"eps0":1}`, &parsed)
	if parsed != e {
		t.Errorf("event: %+v", parsed)
	}

	for _, tc := range []struct{ method, req, want string }{
		{"nope", `{}`, `unknown method "nope"`},
		{"account", `{"delta":2}`, "--delta must be in (0,1), got 2"},
		{"account", `[`, "not a JSON object"},
		{"epsilon", `{"events":[],"delta":0}`, "--delta must be in (0,1), got 0"},
		{"epsilon", `{"events":[{"event":{"mechanism":"shuffle","n":10,"eps0":-1},"count":1}],"delta":1e-5}`, "event 0: "},
		{"epsilon", `{"events":[{"event":{"mechanism":"shuffle","n":10,"eps0":1},"count":-1}],"delta":1e-5}`, "count must be >= 0"},
		{"epsilon", `{"evnts":[]}`, `unknown field "evnts"`},
		{"epsilon", `{"events":[],"delta":1e-5,"orders":[0.5]}`, "--orders"},
		{"delta", `{"events":[],"epsilon":-1}`, "epsilon must be a finite number >= 0"},
		{"delta", `{"events":[{"event":{"mechanism":"shuffle","n":100,"eps0":1},"count":1}],"epsilon":1,"bound":"ccs21-lower"}`, "lower bound"},
		{"certified", `{"events":[{"event":{"mechanism":"shuffle-gaussian","n":100,"sigma":2},"count":1}],"delta":1e-5}`, "certified"},
		{"event", `{"mechanism":"shuffle","n":10,"eps0":1,"x":1}`, `unknown field "x"`},
		{"calibrate", `{"solve":"sigma"}`, "--epsilon (the target) is required"},
		{"calibrate", `{"epsilon":1}`, "--solve is required"},
		{"calibrate", `{"epsilon":0,"solve":"sigma"}`, "--epsilon must be positive and finite, got 0"},
		{"calibrate", `{"epsilon":1,"solve":"sigma","mechanism":"shuffle-gaussian","sigma":2}`, "--sigma is what --solve sigma solves for; omit it"},
	} {
		if got := callError(tc.method, tc.req); !strings.Contains(got, tc.want) {
			t.Errorf("%s %s: error %q, want one containing %q", tc.method, tc.req, got, tc.want)
		}
	}
	// Nothing composed: epsilon and delta 0.
	var z Statement
	callResult(t, "delta", `{"events":[],"epsilon":1}`, &z)
	if z.Delta != 0 || z.Rounds != 0 {
		t.Errorf("empty composition: %+v", z)
	}
}

func strconvG(x float64) string {
	b, _ := json.Marshal(x)
	return string(b)
}
