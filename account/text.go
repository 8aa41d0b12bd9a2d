package account

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/shuffledp/shuffledp/accounting"
	"github.com/shuffledp/shuffledp/calibrate"
	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/internal/directed"
	"github.com/shuffledp/shuffledp/route"
)

// FlagUsage implements cliflag.Usager: --mechanism's usage lists
// event.Mechanisms.
func (*Request) FlagUsage(name string) string {
	if name == "mechanism" {
		return "mechanism: " + strings.Join(event.Mechanisms(), "|")
	}
	return ""
}

// BoundHelp is the list of --bound values in `shuffledp account --help`:
// the bounds of the LDP mechanisms (subsampled-shuffle and shuffle) from
// route.Bounds, whose lines are accounting.BoundDescription's, so
// that a bound added to accounting appears here, in accounting's order
// (best last), as an indented two-column list wrapped at 80 columns. A
// lower bound is marked, a bound that applies to only one of the two
// mechanisms names it, and the list ends with "all"; then a line names
// the approximate-DP baselines (Baselines).
func BoundHelp() string {
	mechs := []string{event.SubsampledShuffle, event.Shuffle}
	var bounds []route.Bound
	appliesTo := map[string][]string{}
	for _, m := range mechs {
		for _, b := range route.Bounds(event.Event{Mechanism: m}) {
			if appliesTo[b.Name] == nil {
				bounds = append(bounds, b)
			}
			appliesTo[b.Name] = append(appliesTo[b.Name], m)
		}
	}
	order := accounting.BoundNames() // the order of accounting's list, best last
	slices.SortStableFunc(bounds, func(a, b route.Bound) int {
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
	rows = append(rows, helpRow{BoundAll, strings.Fields("every bound side by side (the default without --json)")})
	return helpTable(rows, 80) + "Approximate-DP baselines: " + strings.Join(Baselines(), ", ") + "\n"
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

// WriteText writes a as `shuffledp account` prints it: a line of the
// mechanism's parameters (those it uses; for sampled-gaussian its event,
// with the effective rate and sigma), a blank line, and a table of the
// rows (bound, epsilon, optimal order marked "(edge)" at the grid's edge,
// kind, note naming the winner of a best row).
func (a Answer) WriteText(w io.Writer) error {
	req := a.Request
	k := req.K
	if req.Mechanism == accounting.MechanismShuffle {
		k = req.N
	}
	if req.Mechanism == event.SampledGaussian {
		fmt.Fprintf(w, "%s", req.Event()) // the effective rate and sigma
	} else {
		fmt.Fprintf(w, "mechanism=%s n=%d", req.Mechanism, req.N)
		if req.Mechanism == accounting.MechanismSubsampledShuffle || req.given("k") {
			fmt.Fprintf(w, " k=%d", k)
		}
		if req.given("rate") {
			fmt.Fprintf(w, " rate=%g", req.Rate)
		}
		if req.given("sigma") {
			fmt.Fprintf(w, " sigma=%g", req.Sigma)
		} else {
			fmt.Fprintf(w, " eps0=%g", req.Eps0)
		}
		fmt.Fprintf(w, " adjacency=%s", req.Event().EffectiveAdjacency())
	}
	fmt.Fprintf(w, " steps=%d delta=%g\n\n", req.Steps, req.Delta)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "bound\tepsilon\torder\tkind\tnote")
	for _, r := range a.Rows {
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
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Bound, directed.Kind(r.Epsilon, r.EffectiveKind(), directed.Digits), order, r.Kind, note)
	}
	return tw.Flush()
}

// WriteNotes writes what `shuffledp account` prints beside the table (on
// standard error): why each skipped bound was skipped, and a warning for
// each row whose optimal order is at the edge of the grid.
func (a Answer) WriteNotes(w io.Writer) {
	for _, s := range a.Skipped {
		fmt.Fprintf(w, "note: %s\n", s)
	}
	for _, r := range a.Rows {
		if r.AtGridEdge {
			fmt.Fprintf(w, "warning: %s: the optimal order %g is at the edge of the grid; widen --orders\n", r.Bound, r.Order)
		}
	}
}

// WriteText writes c as `shuffledp calibrate` prints it: the solved value
// (an integer for steps and k), the epsilon it spends against the target
// and the mechanism's parameters, then the value without the PLD route
// when it differs, the epsilon of the next integer, the note and the
// grid-edge warning.
func (c Calibration) WriteText(w io.Writer) error {
	val := strconv.FormatFloat(c.Value, 'g', -1, 64)
	if c.Solve == string(calibrate.Steps) || c.Solve == string(calibrate.K) {
		val = strconv.FormatFloat(c.Value, 'f', 0, 64)
	}
	fmt.Fprintf(w, "%s = %s: epsilon %s <= target %g at delta %g (mechanism %s", c.Solve, val, directed.Upper(c.Epsilon, 10), c.TargetEpsilon, c.Delta, c.Mechanism)
	if c.N != 0 { // sampled-gaussian without --n
		fmt.Fprintf(w, ", n=%d", c.N)
	}
	if c.K != nil {
		fmt.Fprintf(w, ", k=%d", *c.K)
	}
	if c.Rate != nil {
		fmt.Fprintf(w, ", rate=%g", *c.Rate)
	}
	if c.Eps0 != nil {
		fmt.Fprintf(w, ", eps0=%g", *c.Eps0)
	}
	if c.Sigma != nil {
		fmt.Fprintf(w, ", sigma=%g", *c.Sigma)
	}
	fmt.Fprintf(w, ", steps=%d, adjacency %s; bound %s", c.Steps, c.Adjacency, c.Bound)
	if c.Winner != "" {
		fmt.Fprintf(w, " won by %s", c.Winner)
	}
	if c.Order > 0 {
		fmt.Fprintf(w, ", order %g", c.Order)
	}
	fmt.Fprintf(w, "; %d evaluations)\n", c.Evaluations)
	if c.NoPLDValue != nil && *c.NoPLDValue != c.Value {
		fmt.Fprintf(w, "without the PLD route (best-no-pld): %s = %s\n", c.Solve, strconv.FormatFloat(*c.NoPLDValue, 'g', -1, 64))
	}
	if c.NextEpsilon != nil {
		fmt.Fprintf(w, "%s = %d would spend epsilon %s\n", c.Solve, int64(c.Value)+1, directed.Upper(*c.NextEpsilon, 10))
	}
	if c.Note != "" {
		fmt.Fprintf(w, "note: %s\n", c.Note)
	}
	if c.AtGridEdge {
		_, err := fmt.Fprintf(w, "warning: the optimal order %g is at the edge of the grid; widen --orders\n", c.Order)
		return err
	}
	return nil
}

// WriteJSON writes c as `shuffledp calibrate --json` prints it: one JSON
// object indented by two spaces.
func (c Calibration) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(c)
}
