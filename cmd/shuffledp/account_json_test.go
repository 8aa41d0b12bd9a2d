package main

import (
	"encoding/json"
	"testing"

	"github.com/shuffledp/shuffledp/account"
)

// TestAccountJSONRequest: `account --json` prints, byte for byte, what
// account.EvaluateJSON (the shared library's and the calculator's entry
// point) returns for the same parameters as a JSON request, and both
// refuse a bad parameter with the same message.
func TestAccountJSONRequest(t *testing.T) {
	t.Parallel() // CPU-bound: beside the package's other parallel tests, on both cores
	for _, tc := range []struct {
		args []string
		json string
	}{
		{[]string{"--n", "60000", "--k", "600", "--eps0", "1", "--steps", "10", "--delta", "1/60000"},
			`{"n":6e4,"k":600,"eps0":1,"steps":10,"delta":"1/60000"}`},
		{[]string{"--mechanism", "shuffle", "--n", "200", "--eps0", "0.5", "--steps", "2", "--delta", "1e-6", "--bound", "all"},
			`{"mechanism":"shuffle","n":200,"eps0":0.5,"steps":2,"delta":1e-6,"bound":"all"}`},
		{[]string{"--mechanism", "shuffle-gaussian", "--n", "1000", "--sigma", "3", "--steps", "10", "--delta", "1e-6", "--orders", "2:64", "--adjacency", "zero-out"},
			`{"mechanism":"shuffle-gaussian","n":1000,"sigma":3,"steps":10,"delta":1e-6,"orders":"2:64","adjacency":"zero-out"}`},
		{[]string{"--mechanism", "sampled-gaussian", "--n", "60000", "--k", "600", "--client-sigma", "0.1", "--steps", "100", "--delta", "1e-5"},
			`{"mechanism":"sampled-gaussian","n":60000,"k":600,"client-sigma":0.1,"steps":100,"delta":1e-5}`},
		{[]string{"--mechanism", "shuffle", "--k", "5"}, `{"mechanism":"shuffle","k":5}`},
		{[]string{"--delta", "2"}, `{"delta":2}`},
	} {
		out, cliErr := runAccount(t, append(tc.args, "--json")...)
		got, err := account.EvaluateJSON([]byte(tc.json))
		switch {
		case cliErr != nil || err != nil:
			if cliErr == nil || err == nil || cliErr.Error() != err.Error() {
				t.Errorf("%v: command error %v, EvaluateJSON error %v", tc.args, cliErr, err)
			}
		case string(got) != out:
			t.Errorf("%v:\ncommand:\n%s\nEvaluateJSON:\n%s", tc.args, out, got)
		}
	}
}

// TestCalibrateJSONRequest: `calibrate --json` prints what account.Call's
// method calibrate (account.Calibrate, the Python package's calibration)
// returns for the same parameters, and both refuse a bad request with the
// same message.
func TestCalibrateJSONRequest(t *testing.T) {
	for _, tc := range []struct {
		args []string
		json string
	}{
		{[]string{"--mechanism", "shuffle-gaussian", "--n", "1000", "--steps", "10", "--delta", "1e-5", "--orders", "2:64", "--epsilon", "1", "--solve", "sigma"},
			`{"mechanism":"shuffle-gaussian","n":1000,"steps":10,"delta":1e-5,"orders":"2:64","epsilon":1,"solve":"sigma"}`},
		{[]string{"--mechanism", "shuffle", "--n", "1000", "--steps", "5", "--delta", "1e-6", "--bound", "ccs21-upper2", "--epsilon", "1", "--solve", "eps0"},
			`{"mechanism":"shuffle","n":1000,"steps":5,"delta":1e-6,"bound":"ccs21-upper2","epsilon":1,"solve":"eps0"}`},
		{[]string{"--mechanism", "shuffle", "--n", "100", "--eps0", "1", "--epsilon", "1", "--solve", "sigma"},
			`{"mechanism":"shuffle","n":100,"eps0":1,"epsilon":1,"solve":"sigma"}`},
		{[]string{"--mechanism", "shuffle-gaussian", "--n", "100", "--sigma", "2", "--epsilon", "1", "--solve", "sigma"},
			`{"mechanism":"shuffle-gaussian","n":100,"sigma":2,"epsilon":1,"solve":"sigma"}`},
	} {
		out, cliErr := runCmd(t, newCalibrateCmd, append(tc.args, "--json")...)
		resp := account.Call("calibrate", []byte(tc.json))
		var env struct {
			Result json.RawMessage
			Error  string
		}
		if err := json.Unmarshal(resp, &env); err != nil {
			t.Fatal(err)
		}
		if cliErr != nil || env.Error != "" {
			if cliErr == nil || cliErr.Error() != env.Error {
				t.Errorf("%v: command error %v, Call error %q", tc.args, cliErr, env.Error)
			}
			continue
		}
		var a, b any
		if err := json.Unmarshal([]byte(out), &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(env.Result, &b); err != nil {
			t.Fatal(err)
		}
		aj, _ := json.Marshal(a)
		bj, _ := json.Marshal(b)
		if string(aj) != string(bj) {
			t.Errorf("%v:\ncommand %s\nCall    %s", tc.args, aj, bj)
		}
	}
}
