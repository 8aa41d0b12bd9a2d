package figures

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"text/tabwriter"
)

// Claim is a headline comparison printed in the source papers: at Setting,
// the bound Ours is PaperRatio times smaller than the bound Baseline
// (PaperRatio is NaN where the paper states only a direction).
type Claim struct {
	Source     string
	Text       string // the paper's words, abridged
	Setting    Setting
	Ours       string // label of the bound in the numerator's place (smaller)
	Baseline   string // label of the bound it is compared with
	PaperRatio float64
}

// Claims returns the papers' headline ratios.
func Claims() []Claim {
	fig2a := Setting{N: 1000000, K: 1000, Eps0: 2, Steps: 100000, Delta: paperDelta}
	fig2b := Setting{N: 10000000, K: 10000, Eps0: 1, Steps: 100000, Delta: paperDelta}
	fig5a := Setting{N: 1000000, K: 1000, Eps0: 3, Steps: 100000, Delta: paperDelta}
	return []Claim{
		{"NeurIPS'21 §4, Fig. 2a", "14x smaller than FMT20 with strong composition", fig2a, "neurips21-upper", FMT20KOV15Label, 14},
		{"NeurIPS'21 §4, Fig. 2a", "14x smaller than FMT20 with strong composition", fig2a, "neurips21-upper", FMT20AnalyticKOV15Label, 14},
		{"NeurIPS'21 §4, Fig. 2a", "2.5x smaller than CCS'21 RDP with WBK19 subsampling", fig2a, "neurips21-upper", "ccs21+wbk19", 2.5},
		{"NeurIPS'21 §4, Fig. 2b", "FMT20+KOV15 behaves better than CCS'21+WBK19 (k=1e4)", fig2b, FMT20KOV15Label, "ccs21+wbk19", math.NaN()},
		{"NeurIPS'21 suppl., Fig. 5a", "17x smaller than FMT20 with strong composition", fig5a, "neurips21-upper", FMT20KOV15Label, 17},
		{"NeurIPS'21 suppl., Fig. 5a", "17x smaller than FMT20 with strong composition", fig5a, "neurips21-upper", FMT20AnalyticKOV15Label, 17},
		{"NeurIPS'21 suppl., Fig. 5a", "almost matches CCS'21 RDP with WBK19 subsampling", fig5a, "neurips21-upper", "ccs21+wbk19", 1},
	}
}

// RatioRow is a claim with what we measure.
type RatioRow struct {
	Claim
	OursEps, BaselineEps float64
	Measured             float64 // BaselineEps / OursEps
}

// Ratios evaluates every claim whose two bounds are among bounds; claims
// naming a bound that is not available are skipped and reported in missing.
func Ratios(bounds []Bound) (rows []RatioRow, missing []string, err error) {
	byLabel := map[string]Bound{}
	for _, b := range bounds {
		byLabel[b.Label()] = b
	}
	for _, c := range Claims() {
		ours, ok1 := byLabel[c.Ours]
		base, ok2 := byLabel[c.Baseline]
		if !ok1 || !ok2 {
			missing = append(missing, fmt.Sprintf("%s: %s vs %s", c.Source, c.Ours, c.Baseline))
			continue
		}
		eo, err := ours.Epsilon(c.Setting)
		if err != nil {
			return nil, nil, fmt.Errorf("%s, %s: %w", c.Source, c.Ours, err)
		}
		eb, err := base.Epsilon(c.Setting)
		if err != nil {
			return nil, nil, fmt.Errorf("%s, %s: %w", c.Source, c.Baseline, err)
		}
		rows = append(rows, RatioRow{Claim: c, OursEps: eo, BaselineEps: eb, Measured: eb / eo})
	}
	return rows, missing, nil
}

func settingString(s Setting) string {
	return fmt.Sprintf("n=%g k=%g eps0=%g T=%g delta=%g", float64(s.N), float64(s.K), s.Eps0, float64(s.Steps), s.Delta)
}

func ratioString(r float64) string {
	if math.IsNaN(r) {
		return "(direction only)"
	}
	return strconv.FormatFloat(r, 'g', 3, 64) + "x"
}

// WriteRatiosText prints the table for people.
func WriteRatiosText(w io.Writer, rows []RatioRow) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "source\tsetting\tbound\teps\tbaseline\teps\tmeasured ratio\tpaper says")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.4g\t%s\t%.4g\t%.3gx\t%s (%s)\n", r.Source, settingString(r.Setting),
			r.Ours, r.OursEps, r.Baseline, r.BaselineEps, r.Measured, ratioString(r.PaperRatio), r.Text)
	}
	return tw.Flush()
}

// WriteRatiosCSV writes the table as CSV.
func WriteRatiosCSV(w io.Writer, rows []RatioRow) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"source", "n", "k", "eps0", "T", "delta", "bound", "eps", "baseline", "baseline_eps", "measured_ratio", "paper_ratio", "paper_text"})
	for _, r := range rows {
		paper := ""
		if !math.IsNaN(r.PaperRatio) {
			paper = strconv.FormatFloat(r.PaperRatio, 'g', -1, 64)
		}
		_ = cw.Write([]string{r.Source, strconv.FormatInt(r.Setting.N, 10), strconv.FormatInt(r.Setting.K, 10),
			strconv.FormatFloat(r.Setting.Eps0, 'g', -1, 64), strconv.FormatInt(r.Setting.Steps, 10),
			strconv.FormatFloat(r.Setting.Delta, 'g', -1, 64), r.Ours, strconv.FormatFloat(r.OursEps, 'g', 10, 64),
			r.Baseline, strconv.FormatFloat(r.BaselineEps, 'g', 10, 64), strconv.FormatFloat(r.Measured, 'g', 4, 64),
			paper, r.Text})
	}
	cw.Flush()
	return cw.Error()
}
