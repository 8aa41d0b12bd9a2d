package ledger

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/shuffledp/shuffledp/internal/directed"
	"github.com/shuffledp/shuffledp/route"
)

// Source is where `shuffledp ledger show|check|shards` read a ledger:
// exactly one of Dir, a run's state directory (holding FileName), and
// Target, the ledger itself (a postgres:// URL or an SQLite file). The
// tags are the command's flags (cliflag.Bind).
type Source struct {
	Dir    string `flag:"state" usage:"the run's state directory (holding ledger.db)"` // usage computed: FlagUsage
	Target string `flag:"ledger" usage:"the ledger itself: a postgres:// URL, or an SQLite ledger file"`
}

// FlagUsage implements cliflag.Usager: --state names FileName.
func (*Source) FlagUsage(name string) string {
	if name == "state" {
		return "the run's state directory (holding " + FileName + ")"
	}
	return ""
}

// Open opens the source for reading (OpenReader) and returns the store
// with a name for messages.
func (s Source) Open(ctx context.Context) (Backend, string, error) {
	return OpenReader(ctx, s.Dir, s.Target)
}

// Show is the question of `shuffledp ledger show` (its flags in the
// tags): one run's summary, re-accounted by a route.
type Show struct {
	Source
	// Run is the run id ("": the ledger's only run, OnlyRun).
	Run string `flag:"run" usage:"run id (default: the ledger's only run)"`
	// Delta converts at this delta (0: the run's).
	Delta float64 `flag:"delta" kind:"fraction" usage:"delta in (0,1) to convert at (default: the run's, which train, up and the shuffler default to 1e-5, while account defaults to 1e-8); a quotient such as 1/60000 is accepted; the output names the delta used"`
	// Entries lists every entry in the summary.
	Entries bool `flag:"entries" usage:"list every entry (round, event, reports, digest, time)"`
	// Accountant is the route (Summary.Reaccount).
	Accountant string `flag:"accountant" default:"ledger" usage:"how to account the stored events: ledger (the run's epsilon as its ledger computed it, round by round: the number its metrics, dashboard and stop used), rdp (the RDP route of the run's bound alone), pld (privacy loss distributions; LDP and sampled-gaussian events), best (the smallest over every route, each evaluated at the run's own rounds: what account --bound best prints)"`
}

// Report is the answer to a Show: the run's summary by the accountant's
// route, and for AccountantBest every route's epsilon. Its JSON is what
// `ledger show --json` prints.
type Report struct {
	Summary
	Accountant string              `json:"accountant"`
	Routes     []route.RouteResult `json:"routes,omitempty"`
	// Neighbouring says what epsilon protects where the run's clients
	// hold several examples or take several local steps
	// (NeighbouringClient); empty otherwise.
	Neighbouring string `json:"neighbouring,omitempty"`
}

// Report opens q's source read-only, summarizes the run (Summarize) and
// re-accounts it (Summary.Reaccount).
func (q Show) Report(ctx context.Context) (Report, error) {
	store, _, err := q.Open(ctx)
	if err != nil {
		return Report{}, err
	}
	defer store.Close()
	run := q.Run
	if run == "" {
		if run, err = OnlyRun(ctx, store); err != nil {
			return Report{}, err
		}
	}
	s, err := Summarize(ctx, store, run, q.Delta, q.Entries)
	if err != nil {
		return Report{}, err
	}
	routes, err := s.Reaccount(q.Accountant)
	r := Report{Summary: s, Accountant: q.Accountant, Routes: routes}
	if q.Dir != "" {
		r.Neighbouring = neighbouringOf(q.Dir)
	}
	return r, err
}

// WriteJSON writes r as one JSON object indented by two spaces.
func (r Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteText writes r as `ledger show` prints it: the summary
// (Summary.WriteText), the accountant and each route's epsilon.
func (r Report) WriteText(w io.Writer) error {
	if err := r.Summary.WriteText(w); err != nil {
		return err
	}
	if r.Neighbouring != "" {
		fmt.Fprintf(w, "neighbouring  %s\n", r.Neighbouring)
	}
	fmt.Fprintf(w, "accountant  %s\n", r.Accountant)
	for _, rt := range r.Routes {
		fmt.Fprintf(w, "  route %-9s %s (%s)\n", rt.Route, directed.Upper(rt.Epsilon, directed.Digits), rt.Bound)
	}
	return nil
}

// WriteText writes s as a two-column table: the run, its rounds and
// reports, the epsilon at the delta (or that nothing was spent), the
// bound and its winner, the assumption it rests on, and its events with
// their counts as account's flags; with entries, then a table of them.
func (s Summary) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "run\t%s\n", s.Run)
	if s.Rounds == 0 {
		fmt.Fprintf(tw, "rounds\t0\n")
	} else {
		fmt.Fprintf(tw, "rounds\t%d (rounds %d..%d, %d reports)\n", s.Rounds, s.FirstRound, s.LastRound, s.Reports)
	}
	bound := s.Bound
	if s.Rounds > 0 {
		var how []string
		if s.Winner != "" && s.Winner != s.Bound && s.Winner != s.Route {
			how = append(how, "attained by "+s.Winner)
		}
		if s.Route != "" && s.Route != route.RouteRDP && s.Route != s.Bound {
			how = append(how, s.Route+" route")
		}
		if s.EvaluatedAt > 0 {
			how = append(how, fmt.Sprintf("evaluated at its checkpoint, %d rounds", s.EvaluatedAt))
		}
		if s.Conjecture {
			how = append(how, "CONJECTURE")
		}
		if len(how) > 0 {
			bound += " (" + strings.Join(how, ", ") + ")"
		}
	}
	if s.Rounds == 0 {
		fmt.Fprintf(tw, "epsilon\t0 at delta %g (nothing spent)\n", s.Delta)
	} else {
		how := ""
		switch {
		case s.Order > 0:
			how = fmt.Sprintf(" (RDP order %g, %s conversion)", s.Order, s.Conversion)
		case s.Route != "":
			how = fmt.Sprintf(" (%s route)", s.Route)
		}
		fmt.Fprintf(tw, "epsilon\t%s at delta %g for %s adjacency%s\n", directed.Upper(s.Epsilon, directed.Digits), s.Delta, s.Adjacency, how)
	}
	fmt.Fprintf(tw, "bound\t%s\n", bound)
	if s.Assumption != "" {
		fmt.Fprintf(tw, "note\t%s (see account --help)\n", s.Assumption)
	}
	for i, c := range s.Events {
		label := ""
		if i == 0 {
			label = "events"
		}
		fmt.Fprintf(tw, "%s\t%d x %s\n", label, c.Count, c.Event.Flags())
	}
	if err := tw.Flush(); err != nil || len(s.Entries) == 0 {
		return err
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "round\tevent\treports\tdigest\ttime")
	for _, e := range s.Entries {
		fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%s\n", e.Round, e.Event.Flags(), e.Reports, e.Digest, e.Time.Format("2006-01-02T15:04:05.000Z07:00"))
	}
	return tw.Flush()
}

// WriteText writes c as `ledger check` prints it: "ok" with the ledger's
// name (Source.Open's) and counts, then one line per run with its RDP and
// PLD statements, and the events no round debits.
func (c Check) WriteText(w io.Writer, name string) error {
	fmt.Fprintf(w, "ok: %s, %d runs, %d entries\n", name, c.Runs, c.Entries)
	for _, r := range c.Accounts {
		label := r.Winner
		if label == "" {
			label = r.Bound
			if route.IsBest(label) {
				label = "rdp-" + label // the RDP route alone: "best" is printed only for best
			}
		}
		line := fmt.Sprintf("run %s: %d rounds, delta %g: rdp %s (%s)", r.Run, r.Rounds, r.Delta, directed.Upper(r.Epsilon, directed.Digits), label)
		if r.PLDErr == nil {
			line += fmt.Sprintf(", pld %s (optimistic %s)", directed.Upper(r.PLD.Upper, directed.Digits), directed.Lower(r.PLD.Lower, directed.Digits))
		} else {
			line += fmt.Sprintf(", pld: %v", r.PLDErr)
		}
		fmt.Fprintln(w, line)
		for _, n := range r.NotRoundEvents {
			fmt.Fprintf(w, "  note: %s\n", n)
		}
	}
	return nil
}
