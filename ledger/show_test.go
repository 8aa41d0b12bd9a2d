package ledger

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/route"
)

func TestSummaryWriteText(t *testing.T) {
	ev := event.Event{Mechanism: event.SubsampledShuffle, N: 200, K: 20, Eps0: 1.5}
	for _, tc := range []struct {
		name string
		r    Report
		want string
	}{
		{"empty", Report{Summary: Summary{Run: "r1", Delta: 1e-5, Bound: "best", Events: []event.Composed{}}, Accountant: AccountantRDP},
			"run      r1\nrounds   0\nepsilon  0 at delta 1e-05 (nothing spent)\nbound    best\naccountant  rdp\n"},
		{"rounds, entries and routes", Report{Summary: Summary{Run: "r2", Rounds: 2, Epsilon: 0.51234567, Delta: 1e-5, Order: 12, Conversion: "cks20",
			Bound: "best", Winner: "clones-rdp", Assumption: "a pair", Adjacency: "replace-one", Events: []event.Composed{{Event: ev, Count: 2}},
			Reports: 40, FirstRound: 1, LastRound: 2, Entries: []Entry{{Run: "r2", Round: 1, Event: ev, Reports: 20, Time: time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.UTC)}}},
			Accountant: AccountantBest, Routes: []route.RouteResult{{Route: "rdp", Epsilon: 0.5123, Bound: "best"}}},
			`run      r2
rounds   2 (rounds 1..2, 40 reports)
epsilon  0.512346 at delta 1e-05 for replace-one adjacency (RDP order 12, cks20 conversion)
bound    best (attained by clones-rdp)
note     a pair (see account --help)
events   2 x --mechanism subsampled-shuffle --n 200 --k 20 --eps0 1.5

round  event                                                     reports  digest                                                            time
1      --mechanism subsampled-shuffle --n 200 --k 20 --eps0 1.5  20       0000000000000000000000000000000000000000000000000000000000000000  2026-01-02T03:04:05.006Z
accountant  best
  route rdp       0.5123 (best)
`},
		// A route other than RDP has no order nor conversion to name (it
		// printed "(RDP order 0,  conversion)"), and the epsilon is rounded
		// up (%.6g printed 0.208173).
		{"pld route", Report{Summary: Summary{Run: "r3", Rounds: 2, Epsilon: 0.2081731, Delta: 1e-5, Bound: "pld", Route: "pld",
			Adjacency: "replace-one", Events: []event.Composed{{Event: ev, Count: 2}}, Reports: 40, FirstRound: 1, LastRound: 2},
			Accountant: AccountantPLD},
			`run      r3
rounds   2 (rounds 1..2, 40 reports)
epsilon  0.208174 at delta 1e-05 for replace-one adjacency (pld route)
bound    pld
events   2 x --mechanism subsampled-shuffle --n 200 --k 20 --eps0 1.5
accountant  pld
`},
	} {
		var out bytes.Buffer
		if err := tc.r.WriteText(&out); err != nil {
			t.Fatal(err)
		}
		if out.String() != tc.want {
			t.Errorf("%s:\n%s\nwant:\n%s", tc.name, out.String(), tc.want)
		}
	}
}

func TestCheckWriteText(t *testing.T) {
	c := Check{Runs: 2, Entries: 3, Accounts: []RunCheck{
		{Summary: Summary{Run: "a", Rounds: 2, Delta: 1e-5, Epsilon: 1.2500001, Bound: "best"}, PLD: route.PLDResult{Upper: 1.1000001, Lower: 1.0499999}},
		{Summary: Summary{Run: "b", Rounds: 1, Delta: 1e-6, Epsilon: 2, Bound: "best"}, PLDErr: errors.New("no route"), NotRoundEvents: []string{"odd event"}},
	}}
	var out bytes.Buffer
	if err := c.WriteText(&out, "x.db"); err != nil {
		t.Fatal(err)
	}
	want := `ok: x.db, 2 runs, 3 entries
run a: 2 rounds, delta 1e-05: rdp 1.25001 (rdp-best), pld 1.10001 (optimistic 1.04999)
run b: 1 rounds, delta 1e-06: rdp 2 (rdp-best), pld: no route
  note: odd event
`
	if out.String() != want {
		t.Errorf("WriteText:\n%s\nwant:\n%s", out.String(), want)
	}
}
