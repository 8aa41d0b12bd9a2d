package main

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/shuffledp/shuffledp/account"
	"github.com/shuffledp/shuffledp/accounting"
	"github.com/shuffledp/shuffledp/event"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The account command's types and computation are package account's;
// these short names are calibrate.go's and the tests'.
type (
	accountRequest = account.Request
	accountRow     = account.Row
)

const boundBestNoPLD = account.BoundBestNoPLD

func init() {
	rootCmd.AddCommand(newAccountCmd())
}

// fractionFlag is a float64 flag that also accepts a quotient "a/b", such
// as --delta 1/60000 (delta = 1/n is common).
type fractionFlag struct{ v *float64 }

func (f fractionFlag) String() string { return strconv.FormatFloat(*f.v, 'g', -1, 64) }
func (f fractionFlag) Type() string   { return "float" }
func (f fractionFlag) Set(s string) error {
	a, err := account.ParseFraction(s)
	if err != nil {
		return err
	}
	*f.v = a
	return nil
}

// countFlag is an integer flag that also accepts exact float notation such
// as 1e6.
type countFlag struct{ v *int64 }

func (f countFlag) String() string { return strconv.FormatInt(*f.v, 10) }
func (f countFlag) Type() string   { return "int" }
func (f countFlag) Set(s string) error {
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		*f.v = i
		return nil
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || x != math.Trunc(x) || math.Abs(x) > 1<<62 {
		return fmt.Errorf("%q is not an integer", s)
	}
	*f.v = int64(x)
	return nil
}

func newAccountCmd() *cobra.Command {
	var (
		req        accountRequest
		ordersSpec string
		asJSON     bool
	)
	cmd := &cobra.Command{
		Use:   "account",
		Short: "Bound the (epsilon, delta) spent by rounds of the (subsampled) shuffle model",
		Long:  longHelp("account") + ldpBoundHelp() + accountExtraBoundHelp() + longHelp("account_routes"),
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			req.Given = func(name string) bool { return cmd.Flags().Changed(name) }
			if !req.Given("bound") && !asJSON {
				req.Bound = "all"
			}
			orders, err := accounting.ParseOrders(ordersSpec)
			if err != nil {
				return fmt.Errorf("--orders: %w", err)
			}
			req.Orders = orders
			a, err := account.Evaluate(req)
			if err != nil {
				return err
			}
			if asJSON {
				return a.WriteJSON(cmd.OutOrStdout())
			}
			writeAccountTable(cmd.OutOrStdout(), req, a.Rows)
			for _, s := range a.Skipped {
				fmt.Fprintf(cmd.ErrOrStderr(), "note: %s\n", s)
			}
			for _, r := range a.Rows {
				if r.AtGridEdge {
					fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s: the optimal order %g is at the edge of the grid; widen --orders\n", r.Bound, r.Order)
				}
			}
			return nil
		},
	}
	f := cmd.Flags()
	addMechanismFlags(f, &req, &ordersSpec, "bound to report (see above)")
	f.BoolVar(&asJSON, "json", false, "print one JSON object")
	return cmd
}

// addMechanismFlags defines the flags that describe a mechanism and its
// accounting, shared by `account` and `calibrate` (with the Fig. 2a
// setting as defaults): --mechanism --bound --n --k --rate --eps0 --sigma
// --steps --delta --orders.
func addMechanismFlags(f *pflag.FlagSet, req *accountRequest, ordersSpec *string, boundUsage string) {
	f.StringVar(&req.Mechanism, "mechanism", accounting.MechanismSubsampledShuffle, "mechanism: "+strings.Join(event.Mechanisms(), "|"))
	f.StringVar(&req.Bound, "bound", accounting.BoundBest, boundUsage)
	req.N, req.K, req.Steps, req.Delta = 1000000, 1000, 100000, 1e-8
	f.Var(countFlag{&req.N}, "n", "number of clients n (1e6 notation accepted)")
	f.Var(countFlag{&req.K}, "k", "clients sampled per round k")
	f.Float64Var(&req.Rate, "rate", 0, "check-in probability per client and round (checkin-gaussian)")
	f.Float64Var(&req.Eps0, "eps0", 2, "LDP parameter eps0 of each client's randomizer (LDP mechanisms)")
	f.Float64Var(&req.Sigma, "sigma", 0, "noise multiplier sigma (Gaussian mechanisms)")
	f.Float64Var(&req.ClientSigma, "client-sigma", 0, "sampled-gaussian: per-client sigma of a shuffle-model run with --k clients; sigma = sqrt(k) * client-sigma")
	f.StringVar(&req.Adjacency, "adjacency", "", "neighbouring datasets the epsilon is for: replace-one (one client's gradient replaced by any other, up to 2C apart; the default, and the only one of the LDP mechanisms), zero-out (replaced by zero: the ICLR'23 paper's convention; the Gaussian curve at sigma instead of sigma/2) or add-remove (sampled-gaussian's default; same numbers as zero-out there)")
	f.Var(countFlag{&req.Steps}, "steps", "number of rounds T")
	f.Var(fractionFlag{&req.Delta}, "delta", "target delta in (0,1); a quotient such as 1/60000 is accepted. The default, 1e-8 (the papers' figures), differs from the 1e-5 of train, up and the shuffler (and so of a run's ledger): pass --delta 1e-5 to compare with a run; the output names the delta used")
	f.StringVar(ordersSpec, "orders", "", `Rényi orders: "lo:hi" (every integer), a comma list, or empty for the mechanism's default grid`)
}

// ldpBoundHelp lists the --bound values of the LDP mechanisms
// (subsampled-shuffle and shuffle) from event.Event.Bounds, whose lines are
// accounting.BoundDescription's, so that a bound added to accounting
// appears here. It marks lower bounds, names the mechanism of a bound that
// applies to only one of the two, and ends with "all".
func ldpBoundHelp() string {
	mechs := []string{event.SubsampledShuffle, event.Shuffle}
	var bounds []event.Bound
	appliesTo := map[string][]string{}
	for _, m := range mechs {
		for _, b := range (event.Event{Mechanism: m}).Bounds() {
			if appliesTo[b.Name] == nil {
				bounds = append(bounds, b)
			}
			appliesTo[b.Name] = append(appliesTo[b.Name], m)
		}
	}
	order := accounting.BoundNames() // the order of accounting's list, best last
	slices.SortStableFunc(bounds, func(a, b event.Bound) int {
		return cmp.Compare(slices.Index(order, a.Name), slices.Index(order, b.Name))
	})
	var rows []helpRow
	for _, b := range bounds {
		var notes []string
		if ms := appliesTo[b.Name]; len(ms) < len(mechs) {
			notes = append(notes, "--mechanism "+strings.Join(ms, ", ")+" only")
		}
		if b.Lower {
			notes = append(notes, "RDP lower bound, not on eps")
		}
		if b.Name == accounting.BoundBest {
			notes = append(notes, "default")
		}
		words := strings.Fields(b.Description)
		if len(notes) > 0 { // one unit: wrapped as a whole
			words = append(words, "("+strings.Join(notes, "; ")+")")
		}
		rows = append(rows, helpRow{b.Name, words})
	}
	rows = append(rows, helpRow{"all", strings.Fields("every bound side by side (the default without --json)")})
	return helpTable(rows, 80)
}

// helpRow is a line of helpTable: a name and the words of its text (a word
// may hold spaces: it is never split).
type helpRow struct {
	name  string
	words []string
}

// helpTable formats rows as an indented two-column list, the text wrapped
// at width columns under its first line.
func helpTable(rows []helpRow, width int) string {
	col := 0
	for _, r := range rows {
		col = max(col, len(r.name))
	}
	indent := strings.Repeat(" ", 2+col+2)
	var sb strings.Builder
	for _, r := range rows {
		line := fmt.Sprintf("  %-*s  ", col, r.name)
		n := 0 // words on the line
		for _, w := range r.words {
			if n > 0 && len(line)+1+len(w) > width {
				sb.WriteString(line + "\n")
				line, n = indent, 0
			}
			if n > 0 {
				line += " "
			}
			line += w
			n++
		}
		sb.WriteString(line + "\n")
	}
	return sb.String()
}

func accountExtraBoundHelp() string {
	return "Approximate-DP baselines: " + strings.Join(account.Baselines(), ", ") + "\n"
}

func writeAccountTable(w io.Writer, req accountRequest, rows []accountRow) {
	k := req.K
	if req.Mechanism == accounting.MechanismShuffle {
		k = req.N
	}
	if req.Mechanism == event.SampledGaussian {
		fmt.Fprintf(w, "%s", req.Event()) // the effective rate and sigma
	} else {
		fmt.Fprintf(w, "mechanism=%s n=%d", req.Mechanism, req.N)
		if req.Mechanism == accounting.MechanismSubsampledShuffle || req.Given("k") {
			fmt.Fprintf(w, " k=%d", k)
		}
		if req.Given("rate") {
			fmt.Fprintf(w, " rate=%g", req.Rate)
		}
		if req.Given("sigma") {
			fmt.Fprintf(w, " sigma=%g", req.Sigma)
		} else {
			fmt.Fprintf(w, " eps0=%g", req.Eps0)
		}
		fmt.Fprintf(w, " adjacency=%s", req.Event().EffectiveAdjacency())
	}
	fmt.Fprintf(w, " steps=%d delta=%g\n\n", req.Steps, req.Delta)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "bound\tepsilon\torder\tkind\tnote")
	for _, r := range rows {
		kind := r.Kind
		order := "-"
		if r.Order > 0 {
			order = strconv.FormatFloat(r.Order, 'g', -1, 64)
			if r.AtGridEdge {
				order += " (edge)"
			}
		}
		note := r.Note
		if r.Winner != "" {
			note = strings.TrimSpace("won by " + r.Winner + " " + note)
		}
		fmt.Fprintf(tw, "%s\t%.6g\t%s\t%s\t%s\n", r.Bound, r.Epsilon, order, kind, note)
	}
	tw.Flush()
}
