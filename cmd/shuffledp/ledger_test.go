package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/internal/directed"
	"github.com/shuffledp/shuffledp/internal/pgtest"
	"github.com/shuffledp/shuffledp/ledger"
)

// writeLedger debits rounds of ev into a ledger in a new state directory.
func writeLedger(t *testing.T, run string, ev event.Event, rounds int64, delta float64) string {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	s, err := ledger.OpenSQLite(ctx, filepath.Join(dir, ledger.FileName), ledger.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	l, err := ledger.Open(ctx, s, run, ledger.Options{Delta: delta})
	if err != nil {
		t.Fatal(err)
	}
	for r := range rounds {
		if err := l.Debit(ctx, r, ev, int(max(ev.K, 1)), sha256.Sum256(fmt.Appendf(nil, "%d", r))); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// roundKindEvent is event.RoundEvent of r: the event a simulation and a
// shuffler debit for a round of that kind.
func roundKindEvent(t *testing.T, r event.Round) event.Event {
	t.Helper()
	e, err := event.RoundEvent(r)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// `ledger show` reports the epsilon `account` gives for the same mechanism
// and --steps equal to the number of rounds, exactly; for every round kind
// (event.RoundEvent), `account` given the flags `ledger show` prints prices
// the event the simulation and the shuffler debit.
func TestLedgerShowAgreesWithAccount(t *testing.T) {
	t.Parallel() // CPU-bound: beside the package's other parallel tests, on both cores
	type row struct {
		ev     event.Event
		rounds int64
		delta  string // --delta of account, and of show when showDelta
		show   bool
	}
	rows := []row{
		{event.Event{Mechanism: "subsampled-shuffle", N: 60000, K: 1000, Eps0: 2}, 40, "1e-5", false},
		{event.Event{Mechanism: "subsampled-shuffle", N: 60000, K: 1000, Eps0: 2}, 40, "1/60000", true},
		{event.Event{Mechanism: "shuffle", N: 1000, Eps0: 1}, 7, "1e-5", false},
		{event.Event{Mechanism: "shuffle-gaussian", N: 1000, Sigma: 5}, 3, "1e-5", false},
	}
	for _, r := range []event.Round{
		{Randomizer: "rinf", Participation: event.ParticipationSample, N: 60000, Reports: 1000, Eps0: 1.5},
		{Randomizer: event.RandomizerGaussian, Participation: event.ParticipationSample, N: 1000, Reports: 100, Sigma: 5, Adjacency: event.AdjacencyReplaceOne},
		{Randomizer: event.RandomizerGaussian, Participation: event.ParticipationCheckIn, N: 60000, Reports: 6000, Sigma: 2, Rate: 0.1, Adjacency: event.AdjacencyZeroOut},
		{Randomizer: event.RandomizerCentralGaussian, Participation: event.ParticipationSample, N: 60000, Reports: 600, Sigma: 1.1, Rate: 0.01, Adjacency: event.AdjacencyAddRemove},
	} {
		rows = append(rows, row{roundKindEvent(t, r), 5, "1e-5", false})
	}
	for _, tc := range rows {
		name := fmt.Sprintf("%s/rounds=%d/delta=%s", tc.ev.Mechanism, tc.rounds, tc.delta)
		t.Run(name, func(t *testing.T) {
			dir := writeLedger(t, "run-a", tc.ev, tc.rounds, 1e-5)
			// account's default is best over every route; so is show's
			// --accountant best.
			args := []string{"show", "--state", dir, "--json", "--accountant", "best"}
			if tc.show {
				args = append(args, "--delta", tc.delta)
			}
			out, err := runCmd(t, newLedgerCmd, args...)
			if err != nil {
				t.Fatalf("ledger %v: %v\n%s", args, err, out)
			}
			var show ledger.Summary
			if err := json.Unmarshal([]byte(out), &show); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			acctArgs := append(strings.Fields(tc.ev.Flags()), "--steps", fmt.Sprint(tc.rounds), "--delta", tc.delta, "--json")
			aout, err := runCmd(t, newAccountCmd, acctArgs...)
			if err != nil {
				t.Fatalf("account %v: %v\n%s", acctArgs, err, aout)
			}
			var acct struct {
				Epsilon, Delta, Order float64
				Bound                 string
			}
			if err := json.Unmarshal([]byte(aout), &acct); err != nil {
				t.Fatalf("%v\n%s", err, aout)
			}
			if show.Rounds != tc.rounds || show.Bound != acct.Bound {
				t.Errorf("show: %d rounds, bound %q; want %d, %q", show.Rounds, show.Bound, tc.rounds, acct.Bound)
			}
			if show.Epsilon != acct.Epsilon || show.Delta != acct.Delta || show.Order != acct.Order {
				t.Errorf("show: epsilon %v delta %v order %v; account: %v %v %v", show.Epsilon, show.Delta, show.Order, acct.Epsilon, acct.Delta, acct.Order)
			}
			if len(show.Events) != 1 || show.Events[0].Event != tc.ev || show.Events[0].Count != tc.rounds {
				t.Errorf("show events %+v, want %d x %+v", show.Events, tc.rounds, tc.ev)
			}
			// The text form carries the same numbers.
			text, err := runCmd(t, newLedgerCmd, "show", "--state", dir, "--accountant", "best")
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{fmt.Sprintf("rounds   %d", tc.rounds), directed.Upper(show.Epsilon, directed.Digits), "--mechanism " + tc.ev.Mechanism} {
				if !strings.Contains(text, want) && !(tc.show && strings.HasPrefix(want, "0.")) {
					t.Errorf("text output lacks %q:\n%s", want, text)
				}
			}
		})
	}
}

func TestLedgerShowJSONFields(t *testing.T) {
	dir := writeLedger(t, "r", event.Event{Mechanism: "shuffle", N: 100, Eps0: 1}, 2, 1e-6)
	out, err := runCmd(t, newLedgerCmd, "show", "--state", dir, "--json", "--entries")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"run", "rounds", "epsilon", "delta", "order", "bound", "events", "entries"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON lacks %q:\n%s", k, out)
		}
	}
	if m["delta"] != 1e-6 {
		t.Errorf("delta %v, want the run's 1e-6", m["delta"])
	}
}

func TestLedgerErrors(t *testing.T) {
	empty := t.TempDir()
	two := writeLedger(t, "a", event.Event{Mechanism: "shuffle", N: 100, Eps0: 1}, 1, 1e-5)
	ctx := context.Background()
	s, err := ledger.OpenSQLite(ctx, filepath.Join(two, ledger.FileName), ledger.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ledger.Open(ctx, s, "b", ledger.Options{Delta: 1e-5}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"show"}, "--state or --ledger is required"},
		{[]string{"check"}, "--state or --ledger is required"},
		{[]string{"show", "--state", two, "--ledger", filepath.Join(two, ledger.FileName)}, "--state and --ledger are exclusive"},
		{[]string{"show", "--ledger", empty}, "is a directory"},
		{[]string{"show", "--ledger", filepath.Join(empty, "none.db")}, "--ledger"},
		{[]string{"show", "--state", empty}, "no ledger"},
		{[]string{"show", "--state", two}, "choose one with --run"},
		{[]string{"show", "--state", two, "--run", "c"}, "unknown run"},
		{[]string{"show", "--state", two, "--run", "a", "--delta", "2"}, "--delta"},
		{[]string{"check", "--state", empty}, "no ledger"},
	} {
		out, err := runCmd(t, newLedgerCmd, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ledger %v: error %v (output %q), want one containing %q", tc.args, err, out, tc.want)
		}
	}
	out, err := runCmd(t, newLedgerCmd, "check", "--state", two)
	if err != nil || !strings.Contains(out, "ok") || !strings.Contains(out, "2 runs, 1 entries") {
		t.Errorf("check: %v\n%s", err, out)
	}
	out, err = runCmd(t, newLedgerCmd, "show", "--state", two, "--run", "b")
	if err != nil || !strings.Contains(out, "nothing spent") {
		t.Errorf("show of an empty run: %v\n%s", err, out)
	}
}

// `ledger show|check --ledger URL` read a PostgreSQL ledger (a real
// server, started for this test) exactly as --state reads the SQLite one:
// the same debits give the same summary; the URL's password is never
// printed.
func TestLedgerPostgres(t *testing.T) {
	srv, err := pgtest.Start(pgtest.Options{})
	if errors.Is(err, pgtest.ErrNotInstalled) && !pgtest.Required() {
		t.Skipf("PostgreSQL is not installed (%v); set %s=1 to make that a failure", err, pgtest.RequireEnv)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	ctx := context.Background()
	db, err := srv.CreateDatabase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	url := strings.Replace(srv.URL(db), "postgres@", "postgres:s3cret-pw@", 1)
	ev := event.Event{Mechanism: "subsampled-shuffle", N: 60000, K: 1000, Eps0: 2}
	dir := writeLedger(t, "run-a", ev, 25, 1e-5)
	store, err := ledger.OpenStore(ctx, url, ledger.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	l, err := ledger.Open(ctx, store, "run-a", ledger.Options{Delta: 1e-5})
	if err != nil {
		t.Fatal(err)
	}
	for r := range int64(25) {
		if err := l.Debit(ctx, r, ev, 1000, sha256.Sum256(fmt.Appendf(nil, "%d", r))); err != nil {
			t.Fatal(err)
		}
	}
	store.Close()

	show := func(args ...string) ledger.Summary {
		t.Helper()
		out, err := runCmd(t, newLedgerCmd, append([]string{"show", "--json", "--entries"}, args...)...)
		if err != nil {
			t.Fatalf("ledger show %v: %v\n%s", args, err, out)
		}
		if strings.Contains(out, "s3cret") {
			t.Errorf("ledger show printed the password:\n%s", out)
		}
		var s ledger.Summary
		if err := json.Unmarshal([]byte(out), &s); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		for i := range s.Entries {
			s.Entries[i].Time = time.Time{} // when each was debited
		}
		return s
	}
	pg, lite, file := show("--ledger", url), show("--state", dir), show("--ledger", filepath.Join(dir, ledger.FileName))
	if !reflect.DeepEqual(pg, lite) || !reflect.DeepEqual(file, lite) {
		t.Errorf("--ledger URL shows %+v\n--state DIR shows %+v\n--ledger FILE shows %+v", pg, lite, file)
	}
	if pg.Rounds != 25 {
		t.Errorf("%d rounds, want 25", pg.Rounds)
	}
	out, err := runCmd(t, newLedgerCmd, "check", "--ledger", url)
	if err != nil || !strings.Contains(out, "ok: postgres://postgres:xxxxx@127.0.0.1") || !strings.Contains(out, "1 runs, 25 entries") || strings.Contains(out, "s3cret") {
		t.Errorf("check --ledger URL: %v\n%s", err, out)
	}
	empty, err := srv.CreateDatabase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := runCmd(t, newLedgerCmd, "show", "--ledger", srv.URL(empty)); err == nil || !strings.Contains(err.Error(), "not a shuffledp ledger") {
		t.Errorf("show of an empty database: %v\n%s", err, out)
	}
}

// TestLedgerReaccount: a ledger's entries are events, so `ledger show
// --accountant rdp|pld|best` re-accounts them by either route, each equal to
// account's --bound rdp-best, pld and best for the same mechanism and
// rounds; `ledger check` prints both routes.
func TestLedgerReaccount(t *testing.T) {
	ev := event.Event{Mechanism: "subsampled-shuffle", N: 100000, K: 1000, Eps0: 3}
	dir := writeLedger(t, "run-r", ev, 10, 1e-5)
	for _, c := range []struct{ accountant, bound string }{
		{"rdp", "rdp-best"}, {"pld", "pld"}, {"best", "best"},
		// The default: the ledger's own statement, best over every route
		// (10 rounds: a checkpoint, so exactly account's best).
		{"ledger", "best"},
	} {
		out, err := runCmd(t, newLedgerCmd, "show", "--state", dir, "--json", "--accountant", c.accountant)
		if err != nil {
			t.Fatalf("%s: %v\n%s", c.accountant, err, out)
		}
		var show struct {
			Epsilon    float64 `json:"epsilon"`
			Accountant string  `json:"accountant"`
		}
		if err := json.Unmarshal([]byte(out), &show); err != nil {
			t.Fatal(err)
		}
		aout, err := runCmd(t, newAccountCmd, append(strings.Fields(ev.Flags()), "--steps", "10", "--delta", "1e-5", "--bound", c.bound, "--json")...)
		if err != nil {
			t.Fatal(err)
		}
		var acct struct{ Epsilon float64 }
		if err := json.Unmarshal([]byte(aout), &acct); err != nil {
			t.Fatal(err)
		}
		if show.Accountant != c.accountant || show.Epsilon != acct.Epsilon {
			t.Errorf("show --accountant %s: %+v; account --bound %s: %v", c.accountant, show, c.bound, acct.Epsilon)
		}
	}
	def, err := runCmd(t, newLedgerCmd, "show", "--state", dir, "--json")
	if err != nil || !strings.Contains(def, `"accountant": "ledger"`) || !strings.Contains(def, `"route": "`) {
		t.Errorf("show without --accountant: %v\n%s", err, def)
	}
	if _, err := runCmd(t, newLedgerCmd, "show", "--state", dir, "--accountant", "magic"); err == nil || !strings.Contains(err.Error(), "--accountant") {
		t.Errorf("bad --accountant: %v", err)
	}
	out, err := runCmd(t, newLedgerCmd, "check", "--state", dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "rdp ") || !strings.Contains(out, "pld ") {
		t.Errorf("check does not show both routes:\n%s", out)
	}
}
