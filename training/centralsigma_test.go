package training

import (
	"math"
	"testing"
)

// TestCentralSigma: sqrt(B) times the clients' multiplier, B the sample or
// rate*clients; a multiplier that is not positive and finite is refused.
func TestCentralSigma(t *testing.T) {
	cases := []struct {
		s, rate         float64
		clients, sample int
		want            float64
		bad             bool
	}{
		{0.86, 0, 60000, 60, math.Sqrt(60) * 0.86, false},
		{0.86, 0.001, 60000, 60, math.Sqrt(60.000000000000004) * 0.86, false},
		{2, 0.5, 8, 1, 4, false},
		{0, 0, 10, 5, 0, true},
		{math.Inf(1), 0, 10, 5, 0, true},
		{math.NaN(), 0, 10, 5, 0, true},
	}
	for _, c := range cases {
		got, err := CentralSigma(c.s, c.clients, c.sample, c.rate)
		if c.bad {
			if err == nil {
				t.Errorf("CentralSigma(%g): no error", c.s)
			}
			continue
		}
		if err != nil || math.Abs(got-c.want) > 1e-12*c.want {
			t.Errorf("CentralSigma(%g, n %d, k %d, rate %g) = %g (%v), want %g", c.s, c.clients, c.sample, c.rate, got, err, c.want)
		}
	}
}
