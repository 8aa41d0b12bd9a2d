package main

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/shuffledp/shuffledp/account"
	"github.com/shuffledp/shuffledp/accounting"
	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/route"
)

func runAccount(t *testing.T, args ...string) (string, error) {
	t.Helper()
	return runCmd(t, newAccountCmd, args...)
}

// TestAccountJSONContract checks account's JSON contract: --json prints one
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
		// The clone-pair bound wins; its optimum (order 120) lies beyond 100.
		{[]string{"--bound", "rdp-best", "--orders", "2:100"}, "rdp-best", 0.2254767153, 100, "clones-rdp"},
		// The clone-pair bound: between krr3-lower and 0.226 at Fig. 2a, orders 2..256
		// (accounting's mpmath oracle checks the curve; 0.2213 without the
		// loss bucketing).
		{[]string{"--bound", "clones-rdp", "--orders", "2:256"}, "clones-rdp", 0.2213687577, 120, ""},
		{[]string{"--bound", "krr3-lower", "--orders", "2:256"}, "krr3-lower", 0.1465352404, 176, ""},
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
// TestAccountDeltaQuotient: --delta 1/n is read as the quotient.
func TestAccountDeltaQuotient(t *testing.T) {
	out, err := runAccount(t, "--n", "60000", "--k", "600", "--delta", "1/60000", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Delta float64 }
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if got.Delta != 1.0/60000 {
		t.Errorf("delta = %g, want 1/60000", got.Delta)
	}
}

func TestAccountBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		name string
	}{
		{[]string{"--n", "0"}, "n"},
		{[]string{"--k", "2000000"}, "k"},
		{[]string{"--eps0", "-1"}, "eps0"},
		{[]string{"--delta", "1"}, "delta"},
		{[]string{"--delta", "2/1"}, "delta"},
		{[]string{"--delta", "1/0"}, "delta"},
		{[]string{"--delta", "one"}, "delta"},
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

// TestAccountJSONEchoesUsedParameters: the JSON echoes only the parameters
// the mechanism used (no eps0 or default k for the Gaussian mechanisms).
func TestAccountJSONEchoesUsedParameters(t *testing.T) {
	for _, c := range []struct {
		args    []string
		present []string
		absent  []string
	}{
		{[]string{"--mechanism", "checkin-gaussian", "--n", "1000", "--rate", "0.1", "--sigma", "5", "--steps", "10", "--orders", "2:20"},
			[]string{"rate", "sigma", "n"}, []string{"eps0", "k"}},
		{[]string{"--mechanism", "subsampled-shuffle-gaussian", "--n", "1000", "--k", "100", "--sigma", "5", "--steps", "10", "--orders", "2:20"},
			[]string{"k", "sigma"}, []string{"eps0", "rate"}},
		{[]string{"--mechanism", "shuffle", "--n", "1000", "--eps0", "1", "--steps", "10"},
			[]string{"k", "eps0"}, []string{"sigma", "rate"}},
	} {
		out, err := runAccount(t, append(c.args, "--json")...)
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(out), &m); err != nil {
			t.Fatal(err)
		}
		for _, k := range c.present {
			if _, ok := m[k]; !ok {
				t.Errorf("%v: %q missing from %s", c.args, k, out)
			}
		}
		for _, k := range c.absent {
			if _, ok := m[k]; ok {
				t.Errorf("%v: %q should not be echoed: %s", c.args, k, out)
			}
		}
	}
}

// The LDP bound list of `account --help` is generated from package route:
// every bound of either LDP mechanism has a line, a lower bound says so,
// a bound of one mechanism names it, the approximate-DP baselines are
// listed, and no line of the list is wider than 80 columns.
func TestAccountHelpListsBounds(t *testing.T) {
	help := newAccountCmd().Long
	_, list, ok := strings.Cut(help, "Bounds for the LDP mechanisms")
	if !ok {
		t.Fatalf("no LDP bound list in\n%s", help)
	}
	list, _, _ = strings.Cut(list, "\n\n")
	// entry returns the text of a bound's entry: its line and the
	// continuation lines under it.
	entry := func(name string) string {
		lines := strings.Split(list, "\n")
		for i, l := range lines {
			f := strings.Fields(l)
			if len(f) == 0 || f[0] != name || !strings.HasPrefix(l, "  "+name+" ") {
				continue
			}
			e := l
			for _, c := range lines[i+1:] {
				if !strings.HasPrefix(c, "    ") {
					break
				}
				e += " " + strings.TrimSpace(c)
			}
			return e
		}
		return ""
	}
	seen := 0
	for _, m := range []string{event.Shuffle, event.SubsampledShuffle} {
		for _, b := range route.Bounds(event.Event{Mechanism: m}) {
			seen++
			e := entry(b.Name)
			if e == "" {
				t.Errorf("--bound %s (%s) is not listed in\n%s", b.Name, m, list)
				continue
			}
			if !strings.Contains(e, b.Description) {
				t.Errorf("entry %q lacks the description %q", e, b.Description)
			}
			if lower := strings.Contains(e, "RDP lower bound, not on eps"); lower != b.Lower {
				t.Errorf("entry %q: says lower bound %v, want %v", e, lower, b.Lower)
			}
		}
	}
	if seen < 10 {
		t.Errorf("only %d bounds checked", seen)
	}
	if e := entry(accounting.BoundCCS21Lower); !strings.Contains(e, "--mechanism shuffle only") {
		t.Errorf("entry %q does not say it is for --mechanism shuffle only", e)
	}
	if e := entry("all"); e == "" {
		t.Error(`no entry for "all"`)
	}
	for _, b := range account.Baselines() {
		if !strings.Contains(list, b) {
			t.Errorf("baseline %s is not listed in\n%s", b, list)
		}
	}
	for _, l := range strings.Split(list, "\n") {
		if n := len([]rune(l)); n > 80 {
			t.Errorf("line of %d columns: %q", n, l)
		}
	}
}
