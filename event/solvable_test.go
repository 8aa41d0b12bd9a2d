package event

import (
	"strings"
	"testing"
)

// TestCheckSolvable: every mechanism against every parameter, the
// parameters it has accepted and the others refused naming --solve.
func TestCheckSolvable(t *testing.T) {
	has := map[string]string{
		Shuffle:                   "eps0 steps",
		SubsampledShuffle:         "eps0 steps k",
		ShuffleGaussian:           "sigma steps",
		SubsampledShuffleGaussian: "sigma steps k",
		CheckinGaussian:           "sigma steps rate",
		SampledGaussian:           "sigma steps rate",
	}
	if len(has) != len(Mechanisms()) {
		t.Fatalf("table has %d mechanisms, Mechanisms() %d", len(has), len(Mechanisms()))
	}
	for m, params := range has {
		for _, p := range []string{"sigma", "steps", "eps0", "k", "rate"} {
			err := CheckSolvable(m, p)
			want := strings.Contains(" "+params+" ", " "+p+" ")
			if want != (err == nil) {
				t.Errorf("CheckSolvable(%s, %s) = %v, want solvable %v", m, p, err, want)
			}
			if err != nil && !strings.HasPrefix(err.Error(), "--solve "+p) {
				t.Errorf("CheckSolvable(%s, %s) = %q: does not name --solve %s", m, p, err, p)
			}
		}
	}
}
