package account

import (
	"bytes"
	"strings"
	"testing"

	"github.com/shuffledp/shuffledp/accounting"
	"github.com/shuffledp/shuffledp/cliflag"
	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/route"
	"github.com/spf13/pflag"
)

// TestRequestFlags binds Request's flags (cliflag.Bind, as `shuffledp
// account` does): the defaults in its tags are Defaults', --mechanism's
// usage lists every mechanism, and every flag is a key of ParseRequest
// (Parameters).
func TestRequestFlags(t *testing.T) {
	var r Request
	fs := pflag.NewFlagSet("account", pflag.ContinueOnError)
	if err := cliflag.Bind(fs, &r); err != nil {
		t.Fatal(err)
	}
	d := Defaults()
	r.Given, d.Given = nil, nil
	if r.Mechanism != d.Mechanism || r.Bound != d.Bound || r.N != d.N || r.K != d.K || r.Eps0 != d.Eps0 || r.Steps != d.Steps || r.Delta != d.Delta ||
		r.Rate != 0 || r.Sigma != 0 || r.ClientSigma != 0 || r.Adjacency != "" {
		t.Errorf("bound defaults %+v, want Defaults() %+v", r, d)
	}
	if u := fs.Lookup("mechanism").Usage; u != "mechanism: "+strings.Join(event.Mechanisms(), "|") {
		t.Errorf("--mechanism usage %q", u)
	}
	fs.VisitAll(func(f *pflag.Flag) {
		if !strings.Contains(" "+strings.Join(Parameters(), " ")+" ", " "+f.Name+" ") {
			t.Errorf("--%s is not a JSON request key", f.Name)
		}
	})
	if err := fs.Parse([]string{"--n", "1e5", "--delta", "1/50000"}); err != nil || r.N != 100000 || r.Delta != 1.0/50000 {
		t.Errorf("parse: %v, n %d, delta %g", err, r.N, r.Delta)
	}
}

// TestBoundHelp: the --bound list names every LDP bound of accounting and
// "all", fits 80 columns, and ends with the baselines.
func TestBoundHelp(t *testing.T) {
	h := BoundHelp()
	for _, line := range strings.Split(strings.TrimSuffix(h, "\n"), "\n") {
		if len(line) > 80 && !strings.HasPrefix(line, "Approximate-DP") {
			t.Errorf("line longer than 80 columns: %q", line)
		}
	}
	names := []string{BoundAll}
	for _, b := range route.Bounds(event.Event{Mechanism: event.SubsampledShuffle}) {
		names = append(names, b.Name)
	}
	for _, n := range names {
		if !strings.Contains(h, "\n  "+n+" ") && !strings.HasPrefix(h, "  "+n+" ") {
			t.Errorf("bound %s not listed", n)
		}
	}
	if !strings.Contains(h, "(default)") || !strings.HasSuffix(h, "Approximate-DP baselines: "+strings.Join(Baselines(), ", ")+"\n") {
		t.Errorf("no default marked, or no baselines line:\n%s", h)
	}
}

func TestAnswerWriteText(t *testing.T) {
	req := Defaults()
	req.Mechanism, req.N, req.Eps0, req.Steps, req.Bound = accounting.MechanismShuffle, 1000, 1, 10, accounting.BoundBest
	given := map[string]bool{"mechanism": true, "n": true, "eps0": true, "steps": true}
	req.Given = func(f string) bool { return given[f] }
	a := Answer{Request: req, Rows: []Row{
		{Bound: "best", Winner: "clones-rdp", Epsilon: 0.1234567, Order: 12, Kind: "upper"},
		{Bound: "pld", Epsilon: 0.5, Kind: "upper", Note: "a note", AtGridEdge: false},
		{Bound: "x", Epsilon: 2, Order: 256, AtGridEdge: true, Kind: "rdp-lower"},
	}, Skipped: []string{"y: skipped"}}
	var out, notes bytes.Buffer
	if err := a.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	a.WriteNotes(&notes)
	want := `mechanism=shuffle n=1000 eps0=1 adjacency=replace-one steps=10 delta=1e-08

bound  epsilon   order       kind       note
best   0.123457  12          upper      won by clones-rdp
pld    0.5       -           upper      a note
x      2         256 (edge)  rdp-lower  
`
	if out.String() != want {
		t.Errorf("WriteText:\n%s\nwant:\n%s", out.String(), want)
	}
	wantNotes := "note: y: skipped\nwarning: x: the optimal order 256 is at the edge of the grid; widen --orders\n"
	if notes.String() != wantNotes {
		t.Errorf("WriteNotes: %q, want %q", notes.String(), wantNotes)
	}
}

func TestCalibrationWriteText(t *testing.T) {
	k, next, nopld := int64(1000), 4.0001, 90.0
	c := Calibration{Solve: "steps", Value: 100, TargetEpsilon: 4, Row: Row{Epsilon: 3.99, Delta: 1e-8, Bound: "best", Winner: "pld", Note: "n"},
		NextEpsilon: &next, Evaluations: 7, NoPLDValue: &nopld, Mechanism: "subsampled-shuffle", N: 1000000, K: &k, Steps: 100, Adjacency: "replace-one"}
	var out bytes.Buffer
	if err := c.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	// The float64 3.99 lies above the decimal 3.99: an upper bound prints rounded up.
	want := `steps = 100: epsilon 3.990000001 <= target 4 at delta 1e-08 (mechanism subsampled-shuffle, n=1000000, k=1000, steps=100, adjacency replace-one; bound best won by pld; 7 evaluations)
without the PLD route (best-no-pld): steps = 90
steps = 101 would spend epsilon 4.0001
note: n
`
	if out.String() != want {
		t.Errorf("WriteText:\n%s\nwant:\n%s", out.String(), want)
	}
}
