package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/shuffledp/shuffledp/accounting"
	"github.com/shuffledp/shuffledp/event"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// accountRequest holds the parsed flags of `shuffledp account`.
type accountRequest struct {
	Mechanism string
	// Bound is the --bound flag; "all" asks for every bound side by side.
	Bound  string
	N, K   int64
	Rate   float64 // --rate (sampling probability for check-in mechanisms); 0 if not given
	Eps0   float64
	Sigma  float64 // --sigma (Gaussian mechanisms); 0 if not given
	Steps  int64
	Delta  float64
	Orders []float64 // the RDP order grid (default grid unless --orders)
	// Given reports whether a flag was set on the command line.
	Given func(flag string) bool

	// ClientSigma is --client-sigma (sampled-gaussian): the per-client noise
	// multiplier of a shuffle-model run, so that sigma = sqrt(k) * ClientSigma.
	ClientSigma float64
	// Adjacency is --adjacency; "" means event.DefaultAdjacency of the
	// mechanism (replace-one; add-remove for sampled-gaussian).
	Adjacency string
}

// accountRow is one line of `account` output: an (epsilon, delta) statement
// from one bound.
type accountRow struct {
	Bound   string  `json:"bound"`
	Winner  string  `json:"winning_bound,omitempty"`
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
	Order   float64 `json:"order,omitempty"` // 0 for bounds not derived from RDP
	// Lower is kept for existing readers: true for an RDP lower bound
	// (Kind "rdp-lower"), which is not a lower bound on epsilon.
	Lower bool `json:"lower_bound"`
	// Kind is "upper" (a guarantee), "rdp-lower" (a lower bound on the RDP
	// curve, converted: neither a guarantee nor a lower bound on epsilon)
	// or "certified-lower" (the exact epsilon of a concrete mechanism: a
	// true lower bound on the worst case).
	Kind string `json:"kind"`
	// PLDOptimistic and PLDGrid are set for the pld bound: the optimistic
	// end of the PLD interval (below the dominating pairs' epsilon; the
	// guarantee is Epsilon, the pessimistic end) and the loss grid width.
	PLDOptimistic float64 `json:"pld_optimistic,omitempty"`
	PLDGrid       float64 `json:"pld_grid,omitempty"`
	// Interval, Ratio, UpperBound and Witness are set for the certified
	// bound: [certified lower, best upper], upper/lower, the bound attaining
	// the upper end and the mechanism whose exact epsilon is the lower end.
	Interval   []float64 `json:"interval,omitempty"`
	Ratio      float64   `json:"ratio,omitempty"`
	UpperBound string    `json:"upper_bound,omitempty"`
	Witness    string    `json:"witness,omitempty"`
	// Routes lists, for "best", every route it compared (the winner
	// included), each with its epsilon and the bound that attains it.
	Routes     []event.RouteResult `json:"routes,omitempty"`
	AtGridEdge bool                `json:"at_grid_edge,omitempty"`
	Conversion string              `json:"conversion,omitempty"`
	Note       string              `json:"note,omitempty"`
}

// The mechanisms and their RDP bounds are package event's (account_rows.go
// turns the flags into an event.Event). accountExtraBounds
// (account_baselines.go) are the --bounds for the LDP shuffle mechanisms
// that are not RDP curves; one returns an error wrapping errNotApplicable
// when it does not apply to the request (then "all" skips it).
var errNotApplicable = errors.New("bound does not apply to this mechanism")

func init() {
	rootCmd.AddCommand(newAccountCmd())
}

// fractionFlag is a float64 flag that also accepts a quotient "a/b", such
// as --delta 1/60000 (delta = 1/n is common).
type fractionFlag struct{ v *float64 }

func (f fractionFlag) String() string { return strconv.FormatFloat(*f.v, 'g', -1, 64) }
func (f fractionFlag) Type() string   { return "float" }
func (f fractionFlag) Set(s string) error {
	num, den, isFrac := strings.Cut(s, "/")
	a, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil {
		return fmt.Errorf("not a number or a quotient a/b: %q", s)
	}
	if isFrac {
		b, err := strconv.ParseFloat(strings.TrimSpace(den), 64)
		if err != nil || b == 0 {
			return fmt.Errorf("not a number or a quotient a/b: %q", s)
		}
		a /= b
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
			if err := validateAccountRequest(req); err != nil {
				return err
			}
			rows, skipped, err := accountRows(req)
			if err != nil {
				return err
			}
			for i := range rows {
				rows[i].Kind = rows[i].kind()
			}
			for _, r := range rows {
				if err := checkRow(r); err != nil {
					return err
				}
			}
			if asJSON {
				return writeAccountJSON(cmd.OutOrStdout(), req, rows, skipped)
			}
			writeAccountTable(cmd.OutOrStdout(), req, rows)
			for _, s := range skipped {
				fmt.Fprintf(cmd.ErrOrStderr(), "note: %s\n", s)
			}
			for _, r := range rows {
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
	f.StringVar(&req.Mechanism, "mechanism", accounting.MechanismSubsampledShuffle, "mechanism: "+strings.Join(accountMechanismNames(), "|"))
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
	if len(accountExtraBounds) == 0 {
		return ""
	}
	return "Approximate-DP baselines: " + strings.Join(sortedKeys(accountExtraBounds), ", ") + "\n"
}

func sortedKeys[V any](m map[string]V) []string {
	k := make([]string, 0, len(m))
	for s := range m {
		k = append(k, s)
	}
	sort.Strings(k)
	return k
}

func validateAccountRequest(req accountRequest) error {
	switch {
	case req.N < 1:
		return fmt.Errorf("--n must be >= 1, got %d", req.N)
	case req.Steps < 0:
		return fmt.Errorf("--steps must be >= 0, got %d", req.Steps)
	case !(req.Delta > 0 && req.Delta < 1):
		return fmt.Errorf("--delta must be in (0,1), got %g", req.Delta)
	case math.IsNaN(req.Eps0) || math.IsInf(req.Eps0, 0) || req.Eps0 < 0:
		return fmt.Errorf("--eps0 must be a finite number >= 0, got %g", req.Eps0)
	}
	return nil
}

// checkRow refuses to print a row that is not a valid statement.
func checkRow(r accountRow) error {
	if math.IsNaN(r.Epsilon) || math.IsInf(r.Epsilon, 0) || r.Epsilon < 0 {
		return fmt.Errorf("%s: internal error: epsilon %g is not a finite non-negative number", r.Bound, r.Epsilon)
	}
	return nil
}

func writeAccountJSON(w io.Writer, req accountRequest, rows []accountRow, skipped []string) error {
	type out struct {
		accountRow
		event.Event              // mechanism, n, k, eps0, sigma, rate
		Steps       int64        `json:"steps"`
		All         []accountRow `json:"all,omitempty"`
		Warnings    []string     `json:"warnings,omitempty"`
	}
	// Echo only the parameters the mechanism used: k for the subsampled
	// mechanisms (n for shuffle), eps0 for the LDP ones, sigma and rate for
	// the Gaussian ones.
	o := out{Event: event.Event{Mechanism: req.Mechanism, N: req.N, Sigma: req.Sigma, Rate: req.Rate}, Steps: req.Steps}
	switch {
	case req.Mechanism == accounting.MechanismShuffle:
		o.K = req.N
	case req.Mechanism == accounting.MechanismSubsampledShuffle || req.Given("k"):
		o.K = req.K
	}
	if !req.Given("sigma") {
		o.Eps0 = req.Eps0
	}
	o.Adjacency = req.event().EffectiveAdjacency()
	main := rows[0]
	if len(rows) > 1 {
		o.All = rows
		for _, r := range rows {
			if r.Bound == accounting.BoundBest {
				main = r
			}
		}
	}
	o.accountRow = main
	for _, r := range rows {
		if r.AtGridEdge {
			o.Warnings = append(o.Warnings, fmt.Sprintf("%s: optimal order %g is at the edge of the grid", r.Bound, r.Order))
		}
	}
	o.Warnings = append(o.Warnings, skipped...)
	if req.Mechanism == event.SampledGaussian {
		o.Event = req.event() // the effective rate and sigma (account_sampled_gaussian.go)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(o)
}

func writeAccountTable(w io.Writer, req accountRequest, rows []accountRow) {
	k := req.K
	if req.Mechanism == accounting.MechanismShuffle {
		k = req.N
	}
	if req.Mechanism == event.SampledGaussian {
		fmt.Fprintf(w, "%s", req.event()) // the effective rate and sigma (account_sampled_gaussian.go)
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
		fmt.Fprintf(w, " adjacency=%s", req.event().EffectiveAdjacency())
	}
	fmt.Fprintf(w, " steps=%d delta=%g\n\n", req.Steps, req.Delta)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "bound\tepsilon\torder\tkind\tnote")
	for _, r := range rows {
		kind := r.kind()
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

// kind returns r.Kind, or its value from Lower for rows built without it.
func (r accountRow) kind() string {
	switch {
	case r.Kind != "":
		return r.Kind
	case r.Lower:
		return accounting.KindRDPLower
	}
	return accounting.KindUpper
}
