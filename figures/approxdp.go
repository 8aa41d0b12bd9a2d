package figures

import (
	"fmt"

	"github.com/shuffledp/shuffledp/approxdp"
	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/metrics"
)

// The values of metrics.Record fields that name the Gaussian runs (the
// randomizer and participation flags of shuffledp train).
const (
	recordGaussian        = "gaussian"
	recordCentralGaussian = "central-gaussian"
	recordCheckIn         = "checkin"
)

// Sensitivity conventions of ApproxDPRecords.
const (
	// SensitivityClip: neighbouring datasets differ in one client's vector
	// by at most the clip radius C (one vector replaced by zero): zero-out
	// adjacency, that of ICLR'23 Thm 1's pair.
	SensitivityClip = "clip"
	// SensitivityDiameter: any two inputs of the ball, 2C apart (pure LDP
	// of each report): replace-one adjacency, and the convention of the
	// ICLR'23 submission's Sec. 5.1 when it calls sigma 9.48 (1, 1/n)-LDP.
	SensitivityDiameter = "diameter"
	// SensitivityAdjacency: the run's own adjacency (RunAdjacency), like
	// for like with its epsilon: SensitivityDiameter for replace-one,
	// SensitivityClip for zero-out.
	SensitivityAdjacency = "adjacency"
)

// RunAdjacency returns the adjacency the records' epsilon is for: their
// Adjacency field, or for records written before it existed the legacy
// zero-out (add-remove for central-gaussian), and an error if the records
// disagree. It is "" for records without a Gaussian randomizer.
func RunAdjacency(recs []metrics.Record) (string, error) {
	var a string
	for i, r := range recs {
		ra := r.Adjacency
		if ra == "" {
			switch r.Randomizer {
			case recordGaussian:
				ra = event.AdjacencyZeroOut
			case recordCentralGaussian:
				ra = event.AdjacencyAddRemove
			}
		}
		if i > 0 && ra != a {
			return "", fmt.Errorf("metrics: records of adjacency %q and %q in one run", a, ra)
		}
		a = ra
	}
	return a, nil
}

// ApproxDPRecords returns copies of the records of a check-in Gaussian run
// (randomizer gaussian, participation checkin) whose Epsilon is the
// approximate-DP route's for the same rounds at the same delta
// (approxdp.CheckInGaussianKOV15: the clients' analytic-Gaussian
// (eps0, delta0)-LDP, FMT20 clones shuffling of the clients that checked
// in, amplification by the check-in rate, KOV15 composition; the baseline
// of Liew et al. 2022 that ICLR'23 Fig. 1b compares with), under the
// sensitivity convention sensitivity (SensitivityClip, SensitivityDiameter,
// or SensitivityAdjacency: the run's, sensitivity 2C under replace-one, C
// under zero-out, so that the route is stated for the relation the run's
// epsilon is for). At most points records are kept, evenly spaced
// by round and including the last (each costs a search over delta splits,
// ~10 s at n = 60000); round 0 is dropped. EpsilonNeurIPS21, Bound,
// BoundWinner and RDPOrder are cleared.
func ApproxDPRecords(recs []metrics.Record, sensitivity string, points int) ([]metrics.Record, error) {
	if points < 1 {
		return nil, fmt.Errorf("points must be >= 1, got %d", points)
	}
	if sensitivity == SensitivityAdjacency {
		a, err := RunAdjacency(recs)
		if err != nil {
			return nil, err
		}
		sensitivity = SensitivityClip
		if a == event.AdjacencyReplaceOne {
			sensitivity = SensitivityDiameter
		}
	}
	var scale float64
	switch sensitivity {
	case SensitivityClip:
		scale = 1
	case SensitivityDiameter:
		scale = 0.5
	default:
		return nil, fmt.Errorf("sensitivity must be %s, %s or %s, got %q", SensitivityClip, SensitivityDiameter, SensitivityAdjacency, sensitivity)
	}
	var run []metrics.Record
	for _, r := range recs {
		if r.Randomizer != recordGaussian || r.Participation != recordCheckIn {
			return nil, fmt.Errorf("metrics: the approximate-DP route is computed for check-in Gaussian runs, got randomizer %s participation %q", r.Randomizer, r.Participation)
		}
		if r.Round > 0 {
			run = append(run, r)
		}
	}
	if len(run) == 0 {
		return nil, nil
	}
	var out []metrics.Record
	last := -1
	for i := 1; i <= points; i++ {
		j := i*len(run)/points - 1
		if j <= last {
			continue
		}
		last = j
		r := run[j]
		c, err := approxdp.CheckInGaussianKOV15(int64(r.Clients), r.Rate, r.Sigma*scale, int64(r.Round), r.Delta)
		if err != nil {
			return nil, fmt.Errorf("approximate-DP route at round %d: %w", r.Round, err)
		}
		eps := c.Epsilon
		r.Epsilon, r.EpsilonNeurIPS21, r.RDPOrder, r.Bound, r.BoundWinner = &eps, nil, nil, "", ""
		out = append(out, r)
	}
	return out, nil
}

// ApproxDPSeries returns the approximate-DP route's series of a check-in
// Gaussian run (shuffledp train plot --approx-dp) under the run's adjacency (like for
// like with its epsilon: sensitivity 2C under replace-one, C under
// zero-out and for metrics written before the adjacency was recorded)
// and, for a zero-out run, also under the LDP diameter 2C (the paper's
// Sec. 5.1 convention).
func ApproxDPSeries(recs []metrics.Record, points int) ([]AccuracySeries, error) {
	adjacency, err := RunAdjacency(recs)
	if err != nil {
		return nil, fmt.Errorf("approx-dp: %w", err)
	}
	series := []struct{ sens, label string }{
		{SensitivityAdjacency, "approx-DP route (analytic Gauss + FMT20 clones + KOV15), " + adjacency + ": sensitivity C"},
	}
	if adjacency == event.AdjacencyReplaceOne {
		series[0].label = "approx-DP route (analytic Gauss + FMT20 clones + KOV15), replace-one: sensitivity 2C"
	} else {
		series = append(series, struct{ sens, label string }{SensitivityDiameter, "approx-DP route, LDP sensitivity 2C (the paper's Sec. 5.1 convention)"})
	}
	var out []AccuracySeries
	for _, c := range series {
		r, err := ApproxDPRecords(recs, c.sens, points)
		if err != nil {
			return nil, fmt.Errorf("approx-dp: %w", err)
		}
		out = append(out, AccuracySeries{Label: c.label, Records: r})
	}
	return out, nil
}
