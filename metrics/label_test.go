package metrics

import "testing"

// TestLabel: "best" is printed only for a best statement, with the route
// attaining it; a conjecture is labelled; nothing spent names no route.
func TestLabel(t *testing.T) {
	zero, ten := int64(0), int64(10)
	for _, tc := range []struct {
		r    Record
		want string
	}{
		{Record{Bound: "best", Route: "pld", BoundWinner: "pld", LedgerRounds: &ten}, "best (pld route)"},
		{Record{Bound: "best", Route: "rdp", BoundWinner: "clones-rdp", LedgerRounds: &ten}, "best (rdp route: clones-rdp)"},
		{Record{Bound: "best", Route: "approx-dp", BoundWinner: "fmt20+kov15", EvaluatedAt: 11, LedgerRounds: &ten}, "best (approx-dp route: fmt20+kov15, evaluated at 11 rounds)"},
		{Record{Bound: "best-conjecture", Route: "rdp", BoundWinner: "iclr23-thm1", Conjecture: true, LedgerRounds: &ten}, "best-conjecture (rdp route: iclr23-thm1; CONJECTURE)"},
		{Record{Bound: "clones-rdp", Route: "rdp", BoundWinner: "clones-rdp", LedgerRounds: &ten}, "clones-rdp"},
		{Record{Bound: "best", Route: "rdp", LedgerRounds: &zero}, "best"},
		{Record{}, ""},
	} {
		if got := tc.r.Label(); got != tc.want {
			t.Errorf("Label() = %q, want %q", got, tc.want)
		}
	}
}
