package main

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// run answers JSON: an unknown role, a role without its function and a
// bad flag are errors whose messages name them.
func TestRunRefuses(t *testing.T) {
	for _, tc := range []struct {
		role string
		req  runRequest
		want string
	}{
		{"nope", runRequest{}, "role must be one of server, shuffler, client, up"},
		{"client", runRequest{}, "the client update function is required"},
		{"server", runRequest{}, "the server update function is required"},
		{"shuffler", runRequest{Args: []string{"--bogus"}}, "bogus"},
		{"up", runRequest{Args: []string{"--state=x"}}, "launcher command line is required"},
	} {
		var out map[string]string
		if err := json.Unmarshal(run(tc.role, tc.req, callbacks{}, io.Discard), &out); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out["error"], tc.want) {
			t.Errorf("%s: %q, want an error containing %q", tc.role, out["error"], tc.want)
		}
	}
}

// ledger.show reads a state directory as `ledger show --json`; a missing
// one is an error.
func TestLedgerShowRefuses(t *testing.T) {
	var out map[string]any
	if err := json.Unmarshal(ledgerShow([]byte(`{"state": "`+t.TempDir()+`/none"}`)), &out); err != nil {
		t.Fatal(err)
	}
	if _, ok := out["error"]; !ok {
		t.Fatalf("ledger.show of a missing state directory: %v", out)
	}
	if err := json.Unmarshal(ledgerShow([]byte(`{`)), &out); err != nil || out["error"] == nil {
		t.Fatalf("ledger.show of bad JSON: %v", out)
	}
}
