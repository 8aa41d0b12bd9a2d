package main

import (
	"encoding/json"
	"fmt"
	"io"
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
	cmd.AddCommand(newLedgerShowCmd(), newLedgerCheckCmd(), newLedgerShardsCmd())
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

// open opens the ledger for reading (ledger.OpenReader), and returns it
// with a name for messages.
func (src *ledgerSource) open(cmd *cobra.Command) (ledger.Backend, string, error) {
	return ledger.OpenReader(cmd.Context(), src.dir, src.target)
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
				if run, err = ledger.OnlyRun(cmd.Context(), store); err != nil {
					return err
				}
			}
			s, err := ledger.Summarize(cmd.Context(), store, run, delta, withRows)
			if err != nil {
				return err
			}
			routes, err := s.Reaccount(accountant)
			if err != nil {
				return err
			}
			return writeLedgerShow(cmd, s, accountant, routes, asJSON)
		},
	}
	src.addFlags(cmd)
	f := cmd.Flags()
	f.StringVar(&run, "run", "", "run id (default: the ledger's only run)")
	f.Var(fractionFlag{&delta}, "delta", "delta in (0,1) to convert at (default: the run's, which train, up and the shuffler default to 1e-5, while account defaults to 1e-8); a quotient such as 1/60000 is accepted; the output names the delta used")
	f.BoolVar(&asJSON, "json", false, "print one JSON object")
	f.BoolVar(&withRows, "entries", false, "list every entry (round, event, reports, digest, time)")
	f.StringVar(&accountant, "accountant", ledger.AccountantRDP, "route to re-account the stored events by: rdp (the run's RDP bound, as the ledger prices rounds), pld (privacy loss distributions; LDP and sampled-gaussian events), best (the smallest over every route)")
	return cmd
}

// writeLedgerShow prints ledger show's summary, as JSON or text.
func writeLedgerShow(cmd *cobra.Command, s ledger.Summary, accountant string, routes []event.RouteResult, asJSON bool) error {
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
		fmt.Fprintf(tw, "%s\t%d x %s\n", label, c.Count, c.Event.Flags())
	}
	tw.Flush()
	if len(s.Entries) > 0 {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "round\tevent\treports\tdigest\ttime")
		for _, e := range s.Entries {
			fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%s\n", e.Round, e.Event.Flags(), e.Reports, e.Digest, e.Time.Format("2006-01-02T15:04:05.000Z07:00"))
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
			c, err := ledger.CheckAll(cmd.Context(), store)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "ok: %s, %d runs, %d entries\n", name, c.Runs, c.Entries)
			for _, r := range c.Accounts {
				line := fmt.Sprintf("run %s: %d rounds, delta %g: rdp %.6g (%s)", r.Run, r.Rounds, r.Delta, r.Epsilon, r.Bound)
				if r.PLDErr == nil {
					line += fmt.Sprintf(", pld %.6g (optimistic %.6g)", r.PLD.Upper, r.PLD.Lower)
				} else {
					line += fmt.Sprintf(", pld: %v", r.PLDErr)
				}
				fmt.Fprintln(cmd.OutOrStdout(), line)
				for _, n := range r.NotRoundEvents {
					fmt.Fprintf(cmd.OutOrStdout(), "  note: %s\n", n)
				}
			}
			return nil
		},
	}
	src.addFlags(cmd)
	return cmd
}
