package metrics

import (
	"fmt"
	"strings"
)

// Label names a run's epsilon statement for a person, as every place
// printing the run's epsilon does (train, up, the shuffler's log, ledger
// show, the dashboard): the bound, then for a minimum over routes ("best",
// "best-conjecture") the route attaining it and the bound attaining it
// there, the checkpoint it was evaluated at (evaluatedAt > 0), and
// "CONJECTURE" when it rests on one. For example "best (pld route)",
// "best (rdp route: clones-rdp)", "best-conjecture (rdp route:
// iclr23-thm1; CONJECTURE)". "best" is printed only for a best statement.
func Label(bound, route, winner string, evaluatedAt int64, conjecture bool) string {
	if bound == "" {
		return ""
	}
	if route == "" || (bound != "best" && bound != "best-conjecture") {
		if conjecture {
			return bound + " (CONJECTURE)"
		}
		return bound
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s route", bound, route)
	if winner != "" && winner != route {
		fmt.Fprintf(&b, ": %s", winner)
	}
	if evaluatedAt > 0 {
		fmt.Fprintf(&b, ", evaluated at %d rounds", evaluatedAt)
	}
	if conjecture {
		b.WriteString("; CONJECTURE")
	}
	b.WriteString(")")
	return b.String()
}

// Label is the record's epsilon statement named (Label of its Bound,
// Route, BoundWinner, EvaluatedAt and Conjecture); "" without a bound, the
// bare bound before the first round (nothing spent, no route attains it).
func (r Record) Label() string {
	if r.LedgerRounds != nil && *r.LedgerRounds == 0 {
		return r.Bound
	}
	return Label(r.Bound, r.Route, r.BoundWinner, r.EvaluatedAt, r.Conjecture)
}
