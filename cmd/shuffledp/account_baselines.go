package main

import (
	"fmt"

	"github.com/shuffledp/shuffledp/accounting"
	"github.com/shuffledp/shuffledp/approxdp"
	"github.com/shuffledp/shuffledp/event"
)

// Approximate-DP baselines for `shuffledp account` (package approxdp):
//
//	fmt20+kov15     FMT20 shuffling (the smaller of the numerical clones bound and
//	                the closed form, at k reports), Ullman subsampling, KOV15 strong
//	                composition over --steps, delta split optimised. Both LDP
//	                mechanisms (for "shuffle", gamma = 1).
//	fmt20-analytic  FMT20 Thm 3.1 closed form for one shuffle of n reports
//	                (--mechanism shuffle --steps 1); eps0 where its condition fails.
//	fmt20-numeric   FMT20 numerical clones bound for one shuffle of n reports
//	                (--mechanism shuffle --steps 1).
const (
	boundFMT20KOV15    = "fmt20+kov15"
	boundFMT20Analytic = "fmt20-analytic"
	boundFMT20Numeric  = "fmt20-numeric"
)

// baselineMechanisms lists the mechanisms each baseline applies to (for the
// --bound names that account lists).
var baselineMechanisms = map[string][]string{
	boundFMT20KOV15:    {event.Shuffle, event.SubsampledShuffle},
	boundFMT20Analytic: {event.Shuffle},
	boundFMT20Numeric:  {event.Shuffle},
}

// accountExtraBounds are the approximate-DP baselines by --bound name: a
// declared table, complete before any init function builds the help text
// that lists them.
var accountExtraBounds = map[string]func(req accountRequest) (accountRow, error){
	boundFMT20KOV15:    accountFMT20KOV15,
	boundFMT20Analytic: accountFMT20Single(approxdp.ShuffleClosedForm),
	boundFMT20Numeric:  accountFMT20Single(approxdp.ShuffleNumerical),
}

func ldpReports(req accountRequest) int64 {
	if req.Mechanism == accounting.MechanismShuffle {
		return req.N
	}
	return req.K
}

func accountFMT20KOV15(req accountRequest) (accountRow, error) {
	row := accountRow{Bound: boundFMT20KOV15, Delta: req.Delta}
	if req.Steps == 0 {
		row.Note = "no rounds: nothing spent"
		return row, nil
	}
	k := ldpReports(req)
	c, err := approxdp.SubsampledShuffle(req.N, k, req.Eps0, req.Steps, req.Delta, approxdp.ShuffleBest)
	if err != nil {
		return accountRow{}, fmt.Errorf("%s: %w", boundFMT20KOV15, err)
	}
	row.Epsilon = c.Epsilon
	switch {
	case req.Steps == 1 && k == req.N:
		row.Note = "approx-DP: one shuffle, FMT20"
	case c.ShuffleDelta == 0:
		row.Note = fmt.Sprintf("approx-DP: shuffle (eps0=%.4g, 0) per round, KOV15 slack %.3g", c.ShuffleEpsilon, c.DeltaTilde)
	default:
		row.Note = fmt.Sprintf("approx-DP: shuffle (%.4g, %.3g), round (%.4g, %.3g), KOV15 slack %.3g",
			c.ShuffleEpsilon, c.ShuffleDelta, c.StepEpsilon, c.StepDelta, c.DeltaTilde)
	}
	return row, nil
}

func accountFMT20Single(method approxdp.ShuffleMethod) func(req accountRequest) (accountRow, error) {
	name := method.String()
	return func(req accountRequest) (accountRow, error) {
		if req.Mechanism != accounting.MechanismShuffle || req.Steps > 1 {
			return accountRow{}, fmt.Errorf("%s bounds one shuffle (--mechanism shuffle --steps 1); use %s for rounds or subsampling: %w",
				name, boundFMT20KOV15, errNotApplicable)
		}
		row := accountRow{Bound: name, Delta: req.Delta}
		if req.Steps == 0 {
			row.Note = "no rounds: nothing spent"
			return row, nil
		}
		switch method {
		case approxdp.ShuffleClosedForm:
			eps, valid, err := approxdp.ClosedFormEpsilon(req.N, req.Eps0, req.Delta)
			if err != nil {
				return accountRow{}, fmt.Errorf("%s: %w", name, err)
			}
			row.Epsilon = eps
			row.Note = "approx-DP, FMT20 Thm 3.1"
			if !valid {
				row.Note = "approx-DP: condition eps0 <= log(n/(16 log(4/delta))) fails, trivial eps0"
			}
		default:
			iv, err := approxdp.NumericalEpsilon(req.N, req.Eps0, req.Delta)
			if err != nil {
				return accountRow{}, fmt.Errorf("%s: %w", name, err)
			}
			row.Epsilon = iv.Upper
			row.Note = fmt.Sprintf("approx-DP, FMT20 clones; the analysis cannot certify below %.6g", iv.Lower)
		}
		return row, nil
	}
}
