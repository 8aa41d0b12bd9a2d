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
		Short: "Inspect the durable privacy ledger of a run's state directory",
		Long: `ledger reads DIR/` + ledger.FileName + `, the privacy ledger in a run's state directory: one
entry per released round (the round's privacy event, the number of reports and
the SHA-256 of the shuffled batch), committed before the batch left the
shuffler.`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newLedgerShowCmd(), newLedgerCheckCmd())
	return cmd
}

// openLedgerStore opens DIR/ledger.db for reading.
func openLedgerStore(cmd *cobra.Command, dir string) (*ledger.SQLiteStore, error) {
	if dir == "" {
		return nil, errors.New("--state is required: the run's state directory")
	}
	path := filepath.Join(dir, ledger.FileName)
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("--state %s: no ledger (%s does not exist)", dir, path)
		}
		return nil, fmt.Errorf("--state: %w", err)
	}
	return ledger.OpenSQLite(cmd.Context(), path, ledger.SQLiteOptions{ReadOnly: true})
}

func newLedgerShowCmd() *cobra.Command {
	var (
		dir, run         string
		delta            float64
		asJSON, withRows bool
	)
	cmd := &cobra.Command{
		Use:   "show --state DIR",
		Short: "Print a run's rounds, (epsilon, delta) and privacy events",
		Long: `show composes the privacy events of every round in the ledger and converts the
total to (epsilon, delta), exactly as ` + "`shuffledp account`" + ` does for the same
mechanism with --steps equal to the number of rounds (with the run's bound and
order grid). --delta converts at another delta; the default is the run's.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("delta") && !(delta > 0 && delta < 1) {
				return fmt.Errorf("--delta must be in (0,1), got %g", delta)
			}
			store, err := openLedgerStore(cmd, dir)
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
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(s)
			}
			writeLedgerSummary(cmd.OutOrStdout(), s)
			if s.AtGridEdge {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: the optimal order %g is at the edge of the run's grid\n", s.Order)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&dir, "state", "", "the run's state directory (holding "+ledger.FileName+")")
	f.StringVar(&run, "run", "", "run id (default: the ledger's only run)")
	f.Var(fractionFlag{&delta}, "delta", "delta in (0,1) to convert at (default: the run's); a quotient such as 1/60000 is accepted")
	f.BoolVar(&asJSON, "json", false, "print one JSON object")
	f.BoolVar(&withRows, "entries", false, "list every entry (round, event, reports, digest, time)")
	return cmd
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

// describeEvent prints an event's parameters as account's flags.
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
		fmt.Fprintf(tw, "epsilon\t%.6g at delta %g (RDP order %g, %s conversion)\n", s.Epsilon, s.Delta, s.Order, s.Conversion)
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
	var dir string
	cmd := &cobra.Command{
		Use:   "check --state DIR",
		Short: "Verify the ledger's integrity (SQLite integrity check, every entry decodes, counts agree)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			store, err := openLedgerStore(cmd, dir)
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
			fmt.Fprintf(cmd.OutOrStdout(), "ok: %s, %d runs, %d entries\n", store.Path(), len(runs), entries)
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "state", "", "the run's state directory (holding "+ledger.FileName+")")
	return cmd
}
