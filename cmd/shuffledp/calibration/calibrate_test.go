// Package calibration holds the slowest tests of `shuffledp calibrate`:
// for every mechanism and solvable parameter the answer against `account`
// at it and one step beyond, and the PLD stage of "best". They run the
// command as processes (the binary built once by internal/clitest), in
// parallel, in a package of their own: in cmd/shuffledp they were most of
// its CPU time, too close to go test's per-package timeout on a busy
// machine.
package calibration

import (
	"encoding/json"
	"fmt"
	"strconv"
	"testing"

	"github.com/shuffledp/shuffledp/account"
	"github.com/shuffledp/shuffledp/internal/clitest"
)

func TestMain(m *testing.M) { clitest.Main(m) }

// runCalibrate runs `shuffledp calibrate args...`.
func runCalibrate(t *testing.T, args ...string) (string, error) {
	t.Helper()
	return clitest.Run(append([]string{"calibrate"}, args...)...)
}

// accountEpsilon runs `shuffledp account --json` and returns its epsilon.
func accountEpsilon(t *testing.T, args ...string) float64 {
	t.Helper()
	out, err := clitest.Run(append(append([]string{"account"}, args...), "--json")...)
	if err != nil {
		t.Fatalf("account %v: %v\n%s", args, err, out)
	}
	var v struct {
		Epsilon float64 `json:"epsilon"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("account %v: %v\n%s", args, err, out)
	}
	return v.Epsilon
}

// TestCalibrateProperty: for every mechanism and solvable parameter, the
// achieved epsilon is <= the target, `account` with the solved value reports
// exactly that epsilon, and one step further (value+1 for integers, a
// relative 2e-6 for sigma, eps0 and rate, beyond the search tolerance and the
// 7-digit rounding) exceeds the target.
func TestCalibrateProperty(t *testing.T) {
	t.Parallel() // CPU-bound: beside the package's other parallel tests, on both cores
	// Every case calibrates against best-no-pld (the first, exact stage of
	// "best"); TestCalibrateBestPLD covers the PLD stage.
	sg := []string{"--mechanism", "shuffle-gaussian", "--n", "60000", "--delta", "1e-5", "--bound", "best-no-pld"}
	ssg := []string{"--mechanism", "subsampled-shuffle-gaussian", "--n", "60000", "--delta", "1e-5", "--orders", "2:64", "--bound", "best-no-pld"}
	ci := []string{"--mechanism", "checkin-gaussian", "--n", "60000", "--rate", "0.01", "--delta", "1e-5", "--orders", "2:32", "--bound", "best-no-pld"}
	ldp := []string{"--mechanism", "subsampled-shuffle", "--n", "1e6", "--delta", "1e-8", "--bound", "best-no-pld"}
	for _, c := range []calibrateCase{
		{sg, "sigma", []string{"--steps", "100"}, 0.5},
		{sg, "sigma", []string{"--steps", "100"}, 4},
		{sg, "sigma", []string{"--steps", "1"}, 0.01},
		{sg, "steps", []string{"--sigma", "9.48"}, 1},
		{ssg, "sigma", []string{"--k", "600", "--steps", "1000"}, 1},
		{ssg, "steps", []string{"--k", "600", "--sigma", "2"}, 1},
		{ssg, "k", []string{"--sigma", "2", "--steps", "1000"}, 1},
		{ci, "sigma", []string{"--steps", "10"}, 2},
		{ci, "steps", []string{"--sigma", "5"}, 2},
		{[]string{"--mechanism", "checkin-gaussian", "--n", "60000", "--delta", "1e-5", "--orders", "2:32", "--bound", "best-no-pld"}, "rate", []string{"--sigma", "5", "--steps", "1000"}, 1},
		{ldp, "steps", []string{"--k", "1000", "--eps0", "2"}, 4},
		{ldp, "eps0", []string{"--k", "1000", "--steps", "100000"}, 1},
		{ldp, "eps0", []string{"--k", "1000", "--steps", "100000"}, 3},
		{ldp, "k", []string{"--eps0", "2", "--steps", "100000"}, 1},
		{[]string{"--mechanism", "shuffle", "--n", "1e5", "--delta", "1e-6", "--steps", "1", "--bound", "best-no-pld"}, "eps0", nil, 1},
	} {
		// Each case is a search and two accountings of its own: run in
		// parallel (the package's slowest test, on both cores).
		t.Run(fmt.Sprintf("%s_%s_%g", c.base[1], c.solve, c.target), func(t *testing.T) {
			t.Parallel()
			c.check(t)
		})
	}
}

// calibrateCase is one case of TestCalibrateProperty: calibrate solves
// for solve with the flags base and fixed, against the target epsilon.
type calibrateCase struct {
	base   []string
	solve  string
	fixed  []string
	target float64
}

// check runs the case: the answer meets the target, account agrees, and one
// step beyond spends more.
func (c calibrateCase) check(t *testing.T) {
	t.Helper()
	tgt := strconv.FormatFloat(c.target, 'g', -1, 64)
	args := append(append(append([]string{}, c.base...), c.fixed...), "--solve", c.solve, "--epsilon", tgt, "--json")
	out, err := runCalibrate(t, args...)
	if err != nil {
		t.Errorf("%v: %v\n%s", args, err, out)
		return
	}
	var v account.Calibration
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("%v: not one JSON object: %v\n%s", args, err, out)
	}
	if v.Solve != c.solve || v.TargetEpsilon != c.target || !(v.Epsilon > 0 && v.Epsilon <= c.target) || v.Evaluations < 2 {
		t.Errorf("%v: %+v", args, v)
		return
	}
	acct := append(append([]string{}, c.base...), c.fixed...)
	val := strconv.FormatFloat(v.Value, 'g', -1, 64)
	if c.solve == "k" || c.solve == "steps" {
		val = strconv.FormatInt(int64(v.Value), 10)
	}
	acct = append(acct, "--bound", account.BoundBestNoPLD) // calibrate's best
	if e := accountEpsilon(t, append(acct, "--"+c.solve, val)...); e != v.Epsilon {
		t.Errorf("%v: account at %s=%s gives %.17g, calibrate reported %.17g", args, c.solve, val, e, v.Epsilon)
	}
	// One step beyond the answer spends more than the target.
	var beyond string
	switch c.solve {
	case "sigma":
		beyond = strconv.FormatFloat(v.Value*(1-2e-6), 'g', -1, 64)
	case "eps0", "rate":
		beyond = strconv.FormatFloat(v.Value*(1+2e-6), 'g', -1, 64)
	default:
		beyond = strconv.FormatInt(int64(v.Value)+1, 10)
		if v.NextEpsilon == nil || !(*v.NextEpsilon > c.target) {
			t.Errorf("%v: next_epsilon %v, want > target", args, v.NextEpsilon)
		}
	}
	if e := accountEpsilon(t, append(acct, "--"+c.solve, beyond)...); !(e > c.target) {
		t.Errorf("%v: %s=%s (beyond the answer %s) still meets the target: epsilon %g", args, c.solve, beyond, val, e)
	}
}

// TestCalibrateBestPLD: "best" (the default) with a PLD route refines the
// answer of the cheap routes (best-no-pld) in the direction that spends
// more (more steps or k, a larger eps0 or rate, a smaller sigma), never
// beyond the target by best: account --bound best at the answer reports the
// same epsilon, <= the target; one step further (value+1 for integers, a
// relative 1e-3 for the continuous parameters, beyond the PLD stage's 1e-4
// tolerance and 5-digit rounding) exceeds it. Small settings, so that each
// PLD evaluation is milliseconds.
func TestCalibrateBestPLD(t *testing.T) {
	t.Parallel() // CPU-bound: beside the package's other parallel tests, on both cores
	ss := []string{"--mechanism", "subsampled-shuffle", "--n", "1e4", "--delta", "1e-5"}
	sgm := []string{"--mechanism", "sampled-gaussian", "--rate", "0.01", "--delta", "1e-5"}
	for _, c := range []struct {
		base   []string
		solve  string
		fixed  []string
		target float64
		more   bool // the answer spends more the larger it is
	}{
		{ss, "steps", []string{"--k", "100", "--eps0", "2"}, 0.3, true},
		{ss, "eps0", []string{"--k", "100", "--steps", "10"}, 1, true},
		{sgm, "sigma", []string{"--steps", "10"}, 1, false},
	} {
		t.Run(fmt.Sprintf("%s_%s_%g", c.base[1], c.solve, c.target), func(t *testing.T) {
			t.Parallel() // three searches with PLD stages: on both cores
			args := append(append(append([]string{}, c.base...), c.fixed...), "--solve", c.solve,
				"--epsilon", strconv.FormatFloat(c.target, 'g', -1, 64), "--json")
			out, err := runCalibrate(t, args...)
			if err != nil {
				t.Fatalf("%v: %v\n%s", args, err, out)
			}
			var best account.Calibration
			if err := json.Unmarshal([]byte(out), &best); err != nil {
				t.Fatal(err)
			}
			if best.NoPLDValue == nil {
				t.Fatalf("%v: no no_pld_value\n%s", args, out)
			}
			cheapVal := *best.NoPLDValue
			if c.more && best.Value < cheapVal || !c.more && best.Value > cheapVal {
				t.Errorf("%v: best %g is on the conservative side of best-no-pld's %g", args, best.Value, cheapVal)
			}
			// The first stage is best-no-pld's answer: account at it meets the
			// target by best-no-pld (TestCalibrateProperty checks its optimality).
			cheapArg := strconv.FormatFloat(cheapVal, 'g', -1, 64)
			if e := accountEpsilon(t, append(append(append([]string{}, c.base...), c.fixed...), "--bound", "best-no-pld", "--"+c.solve, cheapArg)...); !(e <= c.target) {
				t.Errorf("%v: best-no-pld at its answer %s: %g > target", args, cheapArg, e)
			}
			if !(best.Epsilon > 0 && best.Epsilon <= c.target) {
				t.Errorf("%v: best's epsilon %g, target %g", args, best.Epsilon, c.target)
			}
			val := strconv.FormatFloat(best.Value, 'g', -1, 64)
			acct := append(append(append([]string{}, c.base...), c.fixed...), "--bound", "best")
			if e := accountEpsilon(t, append(acct, "--"+c.solve, val)...); e != best.Epsilon {
				t.Errorf("%v: account --bound best at %s gives %.17g, calibrate reported %.17g", args, val, e, best.Epsilon)
			}
			var beyond string
			switch {
			case c.solve == "steps" || c.solve == "k":
				beyond = strconv.FormatInt(int64(best.Value)+1, 10)
			case c.more:
				beyond = strconv.FormatFloat(best.Value*(1+1e-3), 'g', -1, 64)
			default:
				beyond = strconv.FormatFloat(best.Value*(1-1e-3), 'g', -1, 64)
			}
			e := accountEpsilon(t, append(acct, "--"+c.solve, beyond)...)
			if !(e > c.target) {
				t.Errorf("%v: %s=%s beyond the answer %s still meets the target: %g", args, c.solve, beyond, val, e)
			}
			if best.NextEpsilon != nil && *best.NextEpsilon != e {
				t.Errorf("%v: next_epsilon %.17g, account --bound best at %s %.17g", args, *best.NextEpsilon, beyond, e)
			}
			t.Logf("%s: best-no-pld %g, best %g (%s, %d evaluations)", c.solve, cheapVal, best.Value, best.Winner, best.Evaluations)
		})
	}
}
