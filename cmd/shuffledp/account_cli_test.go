package main

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func runAccount(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := newAccountCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

// TestAccountJSONContract checks the issue-2 contract: --json prints one
// object with epsilon, delta, order and bound (and the winner for best), and
// reproduces the spec's reference points.
func TestAccountJSONContract(t *testing.T) {
	for _, c := range []struct {
		args   []string
		bound  string
		eps    float64
		order  float64
		winner string
	}{
		{[]string{"--bound", "neurips21-upper", "--orders", "2:100"}, "neurips21-upper", 1.0402185055, 28, ""},
		{[]string{"--bound", "ccs21+wbk19", "--orders", "2:100"}, "ccs21+wbk19", 1.0236626432, 29, ""},
		{[]string{"--orders", "2:100"}, "best", 1.0236626432, 29, "ccs21+wbk19"},
	} {
		out, err := runAccount(t, append(c.args, "--json")...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", c.args, err, out)
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatalf("%v: output is not one JSON object: %v\n%s", c.args, err, out)
		}
		eps, _ := v["epsilon"].(float64)
		if v["bound"] != c.bound || v["order"] != c.order || v["delta"] != 1e-8 ||
			math.Abs(eps-c.eps) > 1e-9 || eps < c.eps-1e-10 {
			t.Errorf("%v: got %v", c.args, v)
		}
		if c.winner != "" && !strings.Contains(out, c.winner) {
			t.Errorf("%v: winner %q not reported:\n%s", c.args, c.winner, out)
		}
	}
}

// TestAccountBadInput: bad flags fail and name the parameter.
func TestAccountBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		name string
	}{
		{[]string{"--n", "0"}, "n"},
		{[]string{"--k", "2000000"}, "k"},
		{[]string{"--eps0", "-1"}, "eps0"},
		{[]string{"--delta", "1"}, "delta"},
		{[]string{"--steps", "-3"}, "steps"},
		{[]string{"--orders", "0.5:3"}, "order"},
		{[]string{"--bound", "nope"}, "bound"},
		{[]string{"--mechanism", "nope"}, "mechanism"},
	} {
		out, err := runAccount(t, c.args...)
		if err == nil {
			t.Errorf("%v: accepted\n%s", c.args, out)
			continue
		}
		if !strings.Contains(err.Error()+out, c.name) {
			t.Errorf("%v: error %q does not name %q", c.args, err, c.name)
		}
	}
}
