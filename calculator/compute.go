package calculator

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/shuffledp/shuffledp/internal/directed"
)

// Row is one bound's statement, as the page shows it: the fields of a row
// of `shuffledp account --json` the page uses, and the epsilon printed
// rounded in the direction that keeps the statement true (FormatKind).
type Row struct {
	Bound         string    `json:"bound"`
	Winner        string    `json:"winning_bound,omitempty"`
	Epsilon       float64   `json:"epsilon"`
	Delta         float64   `json:"delta"`
	Order         float64   `json:"order,omitempty"`
	Kind          string    `json:"kind"`
	Interval      []float64 `json:"interval,omitempty"`
	Ratio         *float64  `json:"ratio,omitempty"` // null when the lower end is 0
	RatioNote     string    `json:"ratio_note,omitempty"`
	UpperBound    string    `json:"upper_bound,omitempty"`
	Witness       string    `json:"witness,omitempty"`
	PLDOptimistic float64   `json:"pld_optimistic,omitempty"`
	// Conjecture marks a row resting on a conjecture (account's JSON field:
	// the ICLR'23 Gaussian bounds, best-conjecture): not a proven guarantee.
	Conjecture bool   `json:"conjecture,omitempty"`
	Note       string `json:"note,omitempty"`
	// Text is Epsilon printed (FormatKind); not part of the CLI's JSON.
	Text string `json:"text"`
}

// accountOutput is the part of `shuffledp account --json`'s object the
// calculator reads: the main row (best) with every row under "all".
type accountOutput struct {
	Row
	Steps    int64    `json:"steps"`
	All      []Row    `json:"all"`
	Warnings []string `json:"warnings"`
}

// Interval is the certified interval [Lower, Upper]: Lower the exact
// epsilon of a concrete mechanism (a true lower bound on the worst case),
// Upper best's guarantee.
type Interval struct {
	Lower     float64 `json:"lower"`
	Upper     float64 `json:"upper"`
	LowerText string  `json:"lower_text"` // rounded down
	UpperText string  `json:"upper_text"` // rounded up
	// Ratio is Upper/Lower, nil when Lower is 0; RatioText prints it
	// rounded up to three digits, or says why there is none.
	Ratio      *float64 `json:"ratio"`
	RatioText  string   `json:"ratio_text"`
	UpperBound string   `json:"upper_bound"`
	Witness    string   `json:"witness"`
}

// Result is the calculator's answer for one page state.
type Result struct {
	// Query is the page state in canonical form (the shareable query string).
	Query string `json:"query"`
	// Command is the equivalent command line.
	Command string `json:"command"`
	// Best is the "best" row: the smallest guarantee over every route.
	Best Row `json:"best"`
	// Rows are every bound the CLI reports for this mechanism, in its order.
	Rows []Row `json:"rows"`
	// Interval is set where the accountant has a certified lower bound.
	Interval *Interval `json:"interval,omitempty"`
	Warnings []string  `json:"warnings,omitempty"`
	// Account is `shuffledp account --json --bound all`'s object, verbatim.
	Account json.RawMessage `json:"account"`
}

// CurvePoint is best's epsilon after Steps rounds.
type CurvePoint struct {
	Steps   int64   `json:"steps"`
	Epsilon float64 `json:"epsilon"`
	Text    string  `json:"text"`
	Bound   string  `json:"bound"` // the winning bound
}

// Command returns the command line that prints what Compute shows.
func (q Query) Command() string {
	return "shuffledp account --json --bound all " + strings.Join(q.Args(), " ")
}

// Compute answers a page state: every bound `shuffledp account --json
// --bound all` reports for q, the best, and the certified interval where
// the accountant has one.
func Compute(q Query) (Result, error) {
	raw, err := accountJSON(q, "all")
	if err != nil {
		return Result{}, err
	}
	var out accountOutput
	if err := json.Unmarshal(raw, &out); err != nil {
		return Result{}, fmt.Errorf("reading the accountant's output: %w", err)
	}
	rows := out.All
	if len(rows) == 0 {
		rows = []Row{out.Row}
	}
	res := Result{Query: q.Encode(), Command: q.Command(), Warnings: out.Warnings, Account: raw}
	for _, r := range rows {
		if err := checkEpsilon(r); err != nil {
			return Result{}, err
		}
		r.Text = FormatKind(r.Epsilon, r.Kind)
		res.Rows = append(res.Rows, r)
		if r.Bound == "best" {
			res.Best = r
		}
		if len(r.Interval) == 2 {
			res.Interval = &Interval{Lower: r.Interval[0], Upper: r.Interval[1],
				LowerText: FormatLower(r.Interval[0]), UpperText: FormatUpper(r.Interval[1]),
				Ratio: r.Ratio, RatioText: "none: the lower end is 0", UpperBound: r.UpperBound, Witness: r.Witness}
			if r.Ratio != nil {
				res.Interval.RatioText = directed.Upper(*r.Ratio, 3)
			}
			if r.Witness == "" {
				res.Interval.Witness = "no witness (none has a positive epsilon at this delta)"
			}
		}
	}
	if res.Best.Bound == "" {
		return Result{}, fmt.Errorf("the accountant reported no best bound for %s", q.Command())
	}
	return res, nil
}

// checkEpsilon refuses a row whose epsilon is not a finite non-negative
// number (the CLI refuses to print one too).
func checkEpsilon(r Row) error {
	if math.IsNaN(r.Epsilon) || math.IsInf(r.Epsilon, 0) || r.Epsilon < 0 {
		return fmt.Errorf("%s: internal error: epsilon %g is not a finite non-negative number", r.Bound, r.Epsilon)
	}
	return nil
}

// Point returns best's epsilon after t rounds of q's mechanism: one point
// of the page's curve, what `shuffledp account --json` prints with
// --steps t.
func Point(q Query, t int64) (CurvePoint, error) {
	raw, err := accountJSON(q.WithSteps(t), "best")
	if err != nil {
		return CurvePoint{}, err
	}
	var out accountOutput
	if err := json.Unmarshal(raw, &out); err != nil {
		return CurvePoint{}, fmt.Errorf("reading the accountant's output: %w", err)
	}
	if err := checkEpsilon(out.Row); err != nil {
		return CurvePoint{}, err
	}
	return CurvePoint{Steps: t, Epsilon: out.Epsilon, Text: FormatUpper(out.Epsilon), Bound: out.Winner}, nil
}

// CurvePoints is the number of points of the page's curve over rounds.
const CurvePoints = 12

// CurveSteps returns the round counts at which the page draws its curve
// for a run of steps rounds: at most points values from 1 to steps, spaced
// evenly on a log scale, increasing, steps last (empty for steps < 1).
func CurveSteps(steps int64, points int) []int64 {
	if steps < 1 || points < 1 {
		return nil
	}
	var ts []int64
	if points == 1 {
		return []int64{steps}
	}
	for i := range points {
		t := int64(math.Round(math.Exp(math.Log(float64(steps)) * float64(i) / float64(points-1))))
		t = min(max(t, 1), steps)
		if len(ts) == 0 || t > ts[len(ts)-1] {
			ts = append(ts, t)
		}
	}
	if ts[len(ts)-1] != steps {
		ts = append(ts, steps)
	}
	return slices.Clip(ts)
}
