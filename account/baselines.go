package account

import (
	"fmt"
	"sort"

	"github.com/shuffledp/shuffledp/accounting"
	"github.com/shuffledp/shuffledp/approxdp"
	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/internal/directed"
)

// Approximate-DP baselines of `shuffledp account` (package approxdp):
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
	BoundFMT20KOV15    = "fmt20+kov15"
	BoundFMT20Analytic = "fmt20-analytic"
	BoundFMT20Numeric  = "fmt20-numeric"
)

// baselineMechanisms lists the mechanisms each baseline applies to (for the
// --bound names that account lists).
var baselineMechanisms = map[string][]string{
	BoundFMT20KOV15:    {event.Shuffle, event.SubsampledShuffle},
	BoundFMT20Analytic: {event.Shuffle},
	BoundFMT20Numeric:  {event.Shuffle},
}

// extraBounds are the approximate-DP baselines by --bound name: a
// declared table, complete before any init function builds the help text
// that lists them.
var extraBounds = map[string]func(req Request) (Row, error){
	BoundFMT20KOV15:    accountFMT20KOV15,
	BoundFMT20Analytic: accountFMT20Single(approxdp.ShuffleClosedForm),
	BoundFMT20Numeric:  accountFMT20Single(approxdp.ShuffleNumerical),
}

// Baselines lists the approximate-DP baselines' bound names, sorted.
func Baselines() []string {
	names := make([]string, 0, len(extraBounds))
	for b := range extraBounds {
		names = append(names, b)
	}
	sort.Strings(names)
	return names
}

func ldpReports(req Request) int64 {
	if req.Mechanism == accounting.MechanismShuffle {
		return req.N
	}
	return req.K
}

func accountFMT20KOV15(req Request) (Row, error) {
	row := Row{Bound: BoundFMT20KOV15, Delta: req.Delta}
	if req.Steps == 0 {
		row.Note = "no rounds: nothing spent"
		return row, nil
	}
	k := ldpReports(req)
	c, err := approxdp.SubsampledShuffle(req.N, k, req.Eps0, req.Steps, req.Delta, approxdp.ShuffleBest)
	if err != nil {
		return Row{}, fmt.Errorf("%s: %w", BoundFMT20KOV15, err)
	}
	row.Epsilon = c.Epsilon
	switch {
	case req.Steps == 1 && k == req.N:
		row.Note = "approx-DP: one shuffle, FMT20"
	case c.ShuffleDelta == 0:
		row.Note = fmt.Sprintf("approx-DP: shuffle (eps0=%s, 0) per round, KOV15 slack %.3g", directed.Upper(c.ShuffleEpsilon, 4), c.DeltaTilde)
	default:
		row.Note = fmt.Sprintf("approx-DP: shuffle (%s, %s), round (%s, %s), KOV15 slack %.3g",
			directed.Upper(c.ShuffleEpsilon, 4), directed.Upper(c.ShuffleDelta, 3), directed.Upper(c.StepEpsilon, 4), directed.Upper(c.StepDelta, 3), c.DeltaTilde)
	}
	return row, nil
}

func accountFMT20Single(method approxdp.ShuffleMethod) func(req Request) (Row, error) {
	name := method.String()
	return func(req Request) (Row, error) {
		if req.Mechanism != accounting.MechanismShuffle || req.Steps > 1 {
			return Row{}, fmt.Errorf("%s bounds one shuffle (--mechanism shuffle --steps 1); use %s for rounds or subsampling: %w",
				name, BoundFMT20KOV15, errNotApplicable)
		}
		row := Row{Bound: name, Delta: req.Delta}
		if req.Steps == 0 {
			row.Note = "no rounds: nothing spent"
			return row, nil
		}
		switch method {
		case approxdp.ShuffleClosedForm:
			eps, valid, err := approxdp.ClosedFormEpsilon(req.N, req.Eps0, req.Delta)
			if err != nil {
				return Row{}, fmt.Errorf("%s: %w", name, err)
			}
			row.Epsilon = eps
			row.Note = "approx-DP, FMT20 Thm 3.1"
			if !valid {
				row.Note = "approx-DP: condition eps0 <= log(n/(16 log(4/delta))) fails, trivial eps0"
			}
		default:
			iv, err := approxdp.NumericalEpsilon(req.N, req.Eps0, req.Delta)
			if err != nil {
				return Row{}, fmt.Errorf("%s: %w", name, err)
			}
			row.Epsilon = iv.Upper
			row.Note = fmt.Sprintf("approx-DP, FMT20 clones; the analysis cannot certify below %s", directed.Lower(iv.Lower, directed.Digits))
		}
		return row, nil
	}
}
