package randomizer_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/shuffledp/shuffledp/randomizer"
)

// TestNewCheckedNamesTheParameter checks that each invalid parameter is
// refused with an error naming it, and that valid ones build the named
// randomizer.
func TestNewCheckedNamesTheParameter(t *testing.T) {
	ok := randomizer.Config{Eps0: 1, Dim: 3, Radius: 1, Sigma: 1}
	for _, tc := range []struct {
		name string
		cfg  randomizer.Config
		want string // substring of the error; "" = no error
	}{
		{"rinf", ok, ""},
		{"gaussian", randomizer.Config{Dim: 3, Radius: 1, Sigma: 2}, ""}, // eps0 unused
		{"", ok, "--randomizer is required"},
		{"rinf", randomizer.Config{Eps0: 1, Radius: 1}, "--dim must be >= 1"},
		{"rinf", randomizer.Config{Eps0: 1, Dim: 3, Radius: math.Inf(1)}, "--clip must be finite"},
		{"rinf", randomizer.Config{Eps0: 1, Dim: 3, Radius: math.NaN()}, "--clip must be finite"},
		{"gaussian", randomizer.Config{Eps0: 1, Dim: 3, Radius: 1}, "--sigma must be finite"},
		{"r1", randomizer.Config{Eps0: math.NaN(), Dim: 3, Radius: 1}, "--eps0 must be finite"},
		{"nope", ok, "--randomizer nope"},
	} {
		r, err := randomizer.NewChecked(tc.name, tc.cfg)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s %+v: %v", tc.name, tc.cfg, err)
		case tc.want == "" && r.Name() != tc.name:
			t.Errorf("%s: built %s", tc.name, r.Name())
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s %+v: error %v, want one containing %q", tc.name, tc.cfg, err, tc.want)
		}
	}
}

func TestParseVector(t *testing.T) {
	x, err := randomizer.ParseVector(" 1, -2.5 ,3e-1", 3)
	if err != nil || len(x) != 3 || x[0] != 1 || x[1] != -2.5 || x[2] != 0.3 {
		t.Fatalf("got %v, %v", x, err)
	}
	for _, tc := range []struct{ s, want string }{
		{" ", "--input is required"},
		{"1,2", "--input has 2 values, --dim is 3"},
		{"1,NaN,2", "value 2"},
		{"1,2,+Inf", "value 3"},
		{"1,x,2", "value 2"},
	} {
		if _, err := randomizer.ParseVector(tc.s, 3); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one containing %q", tc.s, err, tc.want)
		}
	}
}

// TestAuditAnyPicksTheMethod checks that discrete randomizers get the exact
// audit, bounded ones the analytic one, and the Gaussian none.
func TestAuditAnyPicksTheMethod(t *testing.T) {
	for name, want := range map[string]string{"rr": "exact", "krr": "exact", "rinf": "exact", "r1": "exact", "r2": "analytic", "privunit": "analytic", "gaussian": ""} {
		dim := 3
		if name == "rr" {
			dim = 1
		}
		r, err := randomizer.NewChecked(name, randomizer.Config{Eps0: 1.5, Dim: dim, Radius: 1, Sigma: 1})
		if err != nil {
			t.Fatal(err)
		}
		res, err := randomizer.AuditAny(r)
		if want == "" {
			if err == nil || !strings.Contains(err.Error(), "not pure LDP") {
				t.Errorf("%s: error %v, want a refusal", name, err)
			}
			continue
		}
		if err != nil || res.Method != want || !res.OK || res.Err() != nil {
			t.Errorf("%s: %+v, %v; want method %s and ok", name, res, err, want)
		}
	}
	bad := randomizer.AuditResult{Eps0: 1, MaxLogRatio: 2}
	if bad.Err() == nil {
		t.Error("a failed audit has no error")
	}
}

// The mean of many decoded reports tends to the clipped input.
func ExampleSample() {
	r, _ := randomizer.NewChecked("rinf", randomizer.Config{Eps0: 2, Dim: 2, Radius: 1})
	x := []float64{3, -0.5} // clipped onto the l_inf ball: (1, -0.5)
	mean := make([]float64, 2)
	const n = 200000
	_ = randomizer.Sample(r, x, randomizer.NewSeededSource(1), n, func(z []float64) error {
		for i, v := range z {
			mean[i] += v / n
		}
		return nil
	})
	fmt.Printf("input %v, mean of %d decoded reports ≈ (%.1f, %.1f)\n", x, n, mean[0], mean[1])
	// Output: input [1 -0.5], mean of 200000 decoded reports ≈ (1.0, -0.5)
}
