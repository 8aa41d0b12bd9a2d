package main

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"
)

// TestAccountAdjacency: for each shuffle Gaussian mechanism the default
// adjacency is replace-one. Where the proven routes compare the changed
// client with itself (shuffle, check-in) its epsilon at sigma is the
// zero-out epsilon at sigma/2 bit for bit and above the zero-out epsilon at
// sigma; under WOR subsampling (the changed client against another sampled
// one, up to 2C apart under either relation) zero-out costs the same as
// replace-one. The text and JSON outputs name the adjacency.
func TestAccountAdjacency(t *testing.T) {
	t.Parallel() // CPU-bound: beside the package's other parallel tests, on both cores
	for _, c := range []struct {
		args  []string
		sigma float64
	}{
		{[]string{"--mechanism", "shuffle-gaussian", "--n", "1500"}, 2.5}, // parameters no other test caches
		{[]string{"--mechanism", "subsampled-shuffle-gaussian", "--n", "60000", "--k", "60"}, 0.86},
		{[]string{"--mechanism", "checkin-gaussian", "--n", "6000", "--rate", "0.1"}, 5},
	} {
		at := func(sigma float64, extra ...string) (float64, string) {
			args := append(append([]string{}, c.args...), "--sigma", strconv.FormatFloat(sigma, 'g', -1, 64),
				"--steps", "50", "--delta", "1e-5", "--json")
			out, err := runAccount(t, append(args, extra...)...)
			if err != nil {
				t.Fatalf("%v: %v\n%s", args, err, out)
			}
			var v struct {
				Epsilon   float64
				Adjacency string
			}
			if err := json.Unmarshal([]byte(out), &v); err != nil {
				t.Fatal(err)
			}
			return v.Epsilon, v.Adjacency
		}
		def, defAdj := at(c.sigma)
		ro, roAdj := at(c.sigma, "--adjacency", "replace-one")
		zo, zoAdj := at(c.sigma, "--adjacency", "zero-out")
		half, _ := at(c.sigma/2, "--adjacency", "zero-out")
		if defAdj != "replace-one" || roAdj != "replace-one" || zoAdj != "zero-out" {
			t.Errorf("%v: JSON adjacency %q (default), %q, %q", c.args, defAdj, roAdj, zoAdj)
		}
		wor := c.args[1] == "subsampled-shuffle-gaussian"
		if def != ro || !wor && (ro != half || !(ro > zo)) || wor && ro != zo {
			t.Errorf("%v: default %v, replace-one %v, zero-out at sigma/2 %v, zero-out %v", c.args, def, ro, half, zo)
		}
		out, err := runAccount(t, append(append([]string{}, c.args...), "--sigma", "2", "--steps", "1")...)
		if err != nil || !strings.Contains(out, "adjacency=replace-one") {
			t.Errorf("%v: text lacks the adjacency: %v\n%s", c.args, err, out)
		}
	}
}

// TestAccountAdjacencyErrors: bad values, add-remove on a shuffle Gaussian
// mechanism, replace-one on sampled-gaussian and anything but replace-one
// on an LDP mechanism are refused, naming --adjacency.
func TestAccountAdjacencyErrors(t *testing.T) {
	sg := []string{"--mechanism", "shuffle-gaussian", "--n", "1000", "--sigma", "2", "--steps", "1"}
	central := []string{"--mechanism", "sampled-gaussian", "--rate", "0.01", "--sigma", "2", "--steps", "1"}
	ldp := []string{"--mechanism", "subsampled-shuffle", "--n", "1000", "--k", "10", "--steps", "1"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{append(sg, "--adjacency", "swap"), "must be one of"},
		{append(sg, "--adjacency", "add-remove"), "fixed population"},
		{append(central, "--adjacency", "replace-one"), "Poisson sampling"},
		{append(ldp, "--adjacency", "zero-out"), "eps0-LDP"},
	} {
		out, err := runAccount(t, c.args...)
		if err == nil || !strings.HasPrefix(err.Error(), "--adjacency") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one naming --adjacency with %q\n%s", c.args, err, c.want, out)
		}
	}
	// sampled-gaussian: add-remove (the default) and zero-out are the same
	// numbers; the LDP mechanisms accept replace-one.
	a := accountEpsilon(t, central...)
	z := accountEpsilon(t, append(central, "--adjacency", "zero-out")...)
	if a != z {
		t.Errorf("sampled-gaussian: add-remove %v, zero-out %v", a, z)
	}
	if e := accountEpsilon(t, append(ldp, "--adjacency", "replace-one")...); e != accountEpsilon(t, ldp...) {
		t.Errorf("subsampled-shuffle with --adjacency replace-one: %v", e)
	}
}

// TestCalibrateAdjacency: calibrating the sigma of the shuffle Gaussian
// mechanism under replace-one (the default) gives twice the zero-out sigma
// (up to the PLD stage's 1e-4 search tolerance and 5-digit rounding; its
// proven routes compare the changed client with itself), and the output
// names the adjacency.
func TestCalibrateAdjacency(t *testing.T) {
	base := []string{"--mechanism", "shuffle-gaussian", "--n", "60000", "--steps", "100",
		"--delta", "1e-5", "--epsilon", "1", "--solve", "sigma", "--json"}
	solve := func(extra ...string) (float64, string) {
		out, err := runCalibrate(t, append(append([]string{}, base...), extra...)...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", extra, err, out)
		}
		var v struct {
			Value     float64
			Adjacency string
		}
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatal(err)
		}
		return v.Value, v.Adjacency
	}
	ro, roAdj := solve()
	zo, zoAdj := solve("--adjacency", "zero-out")
	if roAdj != "replace-one" || zoAdj != "zero-out" || math.Abs(ro-2*zo) > 2e-4*ro {
		t.Errorf("sigma %v (%s), %v (%s): want the replace-one sigma twice the zero-out one", ro, roAdj, zo, zoAdj)
	}
}
