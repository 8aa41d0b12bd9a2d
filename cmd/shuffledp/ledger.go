package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/ledger"
	"github.com/spf13/cobra"
)

func init() {
	rootCmd.AddCommand(newLedgerCmd())
}

func newLedgerCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ledger",
		Short: "Inspect the durable privacy ledger of a run (state directory or PostgreSQL)",
		Long: `ledger reads a privacy ledger: one entry per released round (the round's
privacy event, the number of reports and the SHA-256 of the shuffled batch),
committed before the batch left the shuffler. --state DIR reads DIR/` + ledger.FileName + `,
the SQLite ledger in a run's state directory; --ledger names a ledger directly:
a postgres://user:password@host:port/database URL (the shuffler's --ledger), or
the path of an SQLite ledger file. Give exactly one of them. The ledger is
opened read-only.`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newLedgerShowCmd(), newLedgerCheckCmd())
	return cmd
}

// ledgerSource is where `ledger show|check` read: --state DIR or --ledger
// URL|FILE, exactly one.
type ledgerSource struct{ dir, target string }

func (src *ledgerSource) addFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&src.dir, "state", "", "the run's state directory (holding "+ledger.FileName+")")
	f.StringVar(&src.target, "ledger", "", "the ledger itself: a postgres:// URL, or an SQLite ledger file")
}

// open opens the ledger for reading, and returns it with a name for
// messages (a PostgreSQL URL without its password).
func (src *ledgerSource) open(cmd *cobra.Command) (ledger.Backend, string, error) {
	switch {
	case src.dir != "" && src.target != "":
		return nil, "", errors.New("--state and --ledger are exclusive: give the run's state directory or the ledger, not both")
	case src.dir == "" && src.target == "":
		return nil, "", errors.New("--state or --ledger is required: the run's state directory, or the ledger (a postgres:// URL or an SQLite file)")
	case src.target != "":
		s, err := ledger.OpenStore(cmd.Context(), src.target, ledger.StoreOptions{ReadOnly: true})
		if err != nil {
			return nil, "", fmt.Errorf("--ledger: %w", err)
		}
		return s, fmt.Sprint(s), nil
	}
	path := filepath.Join(src.dir, ledger.FileName)
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, "", fmt.Errorf("--state %s: no ledger (%s does not exist)", src.dir, path)
		}
		return nil, "", fmt.Errorf("--state: %w", err)
	}
	s, err := ledger.OpenSQLite(cmd.Context(), path, ledger.SQLiteOptions{ReadOnly: true})
	if err != nil {
		return nil, "", err
	}
	return s, path, nil
}

func newLedgerShowCmd() *cobra.Command {
	var (
		src              ledgerSource
		run              string
		delta            float64
		asJSON, withRows bool
		accountant       string
	)
	cmd := &cobra.Command{
		Use:   "show --state DIR | --ledger URL",
		Short: "Print a run's rounds, (epsilon, delta) and privacy events",
		Long:  longHelp("ledger_show"),
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("delta") && !(delta > 0 && delta < 1) {
				return fmt.Errorf("--delta must be in (0,1), got %g", delta)
			}
			store, _, err := src.open(cmd)
			if err != nil {
				return err
			}
			defer store.Close()
			if run == "" {
				if run, err = onlyRun(cmd, store); err != nil {
					return err
				}
			}
			s, err := ledger.Summarize(cmd.Context(), store, run, delta, withRows)
			if err != nil {
				return err
			}
			routes, err := reaccount(&s, accountant)
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(struct {
					ledger.Summary
					Accountant string              `json:"accountant"`
					Routes     []event.RouteResult `json:"routes,omitempty"`
				}{s, accountant, routes})
			}
			writeLedgerSummary(cmd.OutOrStdout(), s)
			fmt.Fprintf(cmd.OutOrStdout(), "accountant  %s\n", accountant)
			for _, r := range routes {
				fmt.Fprintf(cmd.OutOrStdout(), "  route %-9s %.6g (%s)\n", r.Route, r.Epsilon, r.Bound)
			}
			if s.AtGridEdge {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: the optimal order %g is at the edge of the run's grid\n", s.Order)
			}
			return nil
		},
	}
	src.addFlags(cmd)
	f := cmd.Flags()
	f.StringVar(&run, "run", "", "run id (default: the ledger's only run)")
	f.Var(fractionFlag{&delta}, "delta", "delta in (0,1) to convert at (default: the run's, which train, up and the shuffler default to 1e-5, while account defaults to 1e-8); a quotient such as 1/60000 is accepted; the output names the delta used")
	f.BoolVar(&asJSON, "json", false, "print one JSON object")
	f.BoolVar(&withRows, "entries", false, "list every entry (round, event, reports, digest, time)")
	f.StringVar(&accountant, "accountant", accountantRDP, "route to re-account the stored events by: rdp (the run's RDP bound, as the ledger prices rounds), pld (privacy loss distributions; LDP and sampled-gaussian events), best (the smallest over every route)")
	return cmd
}

// Routes of `ledger show --accountant`.
const (
	accountantRDP  = "rdp"
	accountantPLD  = "pld"
	accountantBest = "best"
)

// reaccount replaces s's statement by the accountant's over the same
// stored events and delta (ledger entries are events, so any route can
// re-account them): rdp leaves s as the ledger computed it, pld is
// event.PLD's upper end, best event.Best's minimum (whose routes it
// returns).
func reaccount(s *ledger.Summary, accountant string) ([]event.RouteResult, error) {
	switch accountant {
	case accountantRDP:
		return nil, nil
	case accountantPLD:
		if s.Rounds == 0 {
			return nil, nil
		}
		r, err := event.PLD(s.Events, s.Delta)
		if err != nil {
			return nil, fmt.Errorf("--accountant pld: %w", err)
		}
		s.Epsilon, s.Order, s.Conversion, s.AtGridEdge, s.Bound, s.Winner = r.Upper, 0, "", false, event.BoundPLD, ""
		return nil, nil
	case accountantBest:
		if s.Rounds == 0 {
			return nil, nil
		}
		r, err := event.Best(s.Events, s.Delta, nil)
		if err != nil {
			return nil, fmt.Errorf("--accountant best: %w", err)
		}
		s.Epsilon, s.Order, s.Conversion, s.AtGridEdge, s.Bound, s.Winner = r.Epsilon, r.Order, r.Conversion, r.AtGridEdge, "best", r.Winner
		return r.Routes, nil
	}
	return nil, fmt.Errorf("--accountant must be %s, %s or %s, got %q", accountantRDP, accountantPLD, accountantBest, accountant)
}

// onlyRun returns the store's run when it has exactly one.
func onlyRun(cmd *cobra.Command, store ledger.Store) (string, error) {
	runs, err := store.Runs(cmd.Context())
	if err != nil {
		return "", err
	}
	switch len(runs) {
	case 0:
		return "", errors.New("the ledger has no runs")
	case 1:
		return runs[0], nil
	}
	return "", fmt.Errorf("the ledger has %d runs (%s): choose one with --run", len(runs), strings.Join(runs, ", "))
}

// describeEvent prints an event's parameters as account's flags, with the
// adjacency of a Gaussian event spelled out (an event stored without one
// has its legacy meaning, which is not account's default).
func describeEvent(ev event.Event) string {
	var b strings.Builder
	fmt.Fprintf(&b, "--mechanism %s --n %d", ev.Mechanism, ev.N)
	if ev.K != 0 {
		fmt.Fprintf(&b, " --k %d", ev.K)
	}
	if ev.Eps0 != 0 {
		fmt.Fprintf(&b, " --eps0 %g", ev.Eps0)
	}
	if ev.Sigma != 0 {
		fmt.Fprintf(&b, " --sigma %g", ev.Sigma)
	}
	if ev.Rate != 0 {
		fmt.Fprintf(&b, " --rate %g", ev.Rate)
	}
	if ev.Sigma != 0 {
		fmt.Fprintf(&b, " --adjacency %s", ev.EffectiveAdjacency())
	}
	return b.String()
}

func writeLedgerSummary(w io.Writer, s ledger.Summary) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "run\t%s\n", s.Run)
	if s.Rounds == 0 {
		fmt.Fprintf(tw, "rounds\t0\n")
	} else {
		fmt.Fprintf(tw, "rounds\t%d (rounds %d..%d, %d reports)\n", s.Rounds, s.FirstRound, s.LastRound, s.Reports)
	}
	bound := s.Bound
	if s.Winner != "" {
		bound += " (attained by " + s.Winner + ")"
	}
	if s.Rounds == 0 {
		fmt.Fprintf(tw, "epsilon\t0 at delta %g (nothing spent)\n", s.Delta)
	} else {
		fmt.Fprintf(tw, "epsilon\t%.6g at delta %g for %s adjacency (RDP order %g, %s conversion)\n", s.Epsilon, s.Delta, s.Adjacency, s.Order, s.Conversion)
	}
	fmt.Fprintf(tw, "bound\t%s\n", bound)
	if s.Assumption != "" {
		fmt.Fprintf(tw, "note\tassumes %s (see account --help)\n", s.Assumption)
	}

	for i, c := range s.Events {
		label := ""
		if i == 0 {
			label = "events"
		}
		fmt.Fprintf(tw, "%s\t%d x %s\n", label, c.Count, describeEvent(c.Event))
	}
	tw.Flush()
	if len(s.Entries) > 0 {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "round\tevent\treports\tdigest\ttime")
		for _, e := range s.Entries {
			fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%s\n", e.Round, describeEvent(e.Event), e.Reports, e.Digest, e.Time.Format("2006-01-02T15:04:05.000Z07:00"))
		}
		tw.Flush()
	}
}

func newLedgerCheckCmd() *cobra.Command {
	var src ledgerSource
	cmd := &cobra.Command{
		Use:   "check --state DIR | --ledger URL",
		Short: "Verify the ledger's integrity (the database's own checks, every entry decodes, counts agree)",
		Long:  longHelp("ledger_check"),
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			store, name, err := src.open(cmd)
			if err != nil {
				return err
			}
			defer store.Close()
			if err := store.Check(cmd.Context()); err != nil {
				return err
			}
			runs, err := store.Runs(cmd.Context())
			if err != nil {
				return err
			}
			var entries int64
			for _, r := range runs {
				info, err := store.Run(cmd.Context(), r)
				if err != nil {
					return err
				}
				entries += info.Entries
			}
			fmt.Fprintf(cmd.OutOrStdout(), "ok: %s, %d runs, %d entries\n", name, len(runs), entries)
			// Re-account every run by both routes (entries are events).
			for _, r := range runs {
				s, err := ledger.Summarize(cmd.Context(), store, r, 0, false)
				if err != nil {
					return err
				}
				if s.Rounds == 0 {
					continue
				}
				line := fmt.Sprintf("run %s: %d rounds, delta %g: rdp %.6g (%s)", r, s.Rounds, s.Delta, s.Epsilon, s.Bound)
				if p, err := event.PLD(s.Events, s.Delta); err == nil {
					line += fmt.Sprintf(", pld %.6g (optimistic %.6g)", p.Upper, p.Lower)
				} else {
					line += fmt.Sprintf(", pld: %v", err)
				}
				fmt.Fprintln(cmd.OutOrStdout(), line)
			}
			return nil
		},
	}
	src.addFlags(cmd)
	return cmd
}
