package account

import (
	"encoding/json"
	"testing"
)

// FuzzParseRequest: any bytes give a request or an error, never a panic;
// a request that parses keeps a non-nil Given that reports only the keys
// of the input.
func FuzzParseRequest(f *testing.F) {
	for _, s := range []string{`{}`, `{"n":1e6,"k":1000}`, `{"delta":"1/60000","orders":[2,3]}`, `{"orders":"2:64"}`,
		`{"n":1.5}`, `{"mechanism":null}`, `[]`, `{"x":1}`, `{"client-sigma":0.1,"k":10}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ParseRequest(data)
		if err != nil {
			return
		}
		var keys map[string]json.RawMessage
		if json.Unmarshal(data, &keys) != nil {
			t.Fatalf("ParseRequest accepted %q, which is not a JSON object", data)
		}
		for _, p := range Parameters() {
			if _, ok := keys[p]; !ok && r.Given(p) {
				t.Errorf("%q: %s given but absent", data, p)
			}
		}
	})
}

// FuzzCallEvent: Call never panics and always answers one JSON object
// with exactly one of result and error (the methods that parse only).
func FuzzCallEvent(f *testing.F) {
	for _, s := range []string{`{"mechanism":"shuffle","n":10,"eps0":1}`, `{"mechanism":"sampled-gaussian","rate":0.5,"sigma":1}`, `{`, `null`, `{"mechanism":"x"}`} {
		f.Add("event", []byte(s))
		f.Add("bounds", []byte(s))
	}
	f.Fuzz(func(t *testing.T, method string, data []byte) {
		if method != "event" && method != "bounds" && method != "mechanisms" {
			method = "event"
		}
		var env map[string]json.RawMessage
		out := Call(method, data)
		if err := json.Unmarshal(out, &env); err != nil {
			t.Fatalf("Call(%s, %q) = %q: %v", method, data, out, err)
		}
		_, hasResult := env["result"]
		_, hasError := env["error"]
		if hasResult == hasError || len(env) != 1 {
			t.Fatalf("Call(%s, %q) = %s", method, data, out)
		}
	})
}
