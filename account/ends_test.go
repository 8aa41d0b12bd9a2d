package account

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/shuffledp/shuffledp/accounting"
)

// TestTableRoundsOutward: the table prints an upper bound rounded up and a
// lower bound rounded down at its six digits (%.6g printed 0.208173 for the
// guarantee 0.2081731, below the bound it states).
func TestTableRoundsOutward(t *testing.T) {
	req := Defaults()
	a := Answer{Request: req, Rows: []Row{
		{Bound: "best", Epsilon: 0.2081731, Delta: req.Delta, Kind: accounting.KindUpper},
		{Bound: BoundCertified, Epsilon: 0.1367009, Delta: req.Delta, Kind: accounting.KindCertifiedLower},
		{Bound: accounting.BoundKRR3Lower, Epsilon: 0.4999999, Delta: req.Delta, Kind: accounting.KindRDPLower},
	}}
	var b bytes.Buffer
	if err := a.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, line := range strings.Split(b.String(), "\n") {
		if f := strings.Fields(line); len(f) >= 2 {
			got[f[0]] = f[1]
		}
	}
	for bound, want := range map[string]string{"best": "0.208174", BoundCertified: "0.1367", accounting.BoundKRR3Lower: "0.499999"} {
		if got[bound] != want {
			t.Errorf("%s printed %q, want %q:\n%s", bound, got[bound], want, b.String())
		}
	}
}

// TestCertifiedJSONLowerZero: at n = 3, k = 1, eps0 = 0.5, one round,
// delta = 0.1 the certified lower end is 0, so the ratio upper/lower is
// infinite: the JSON (which has no infinity; it used to fail with +Inf)
// carries a null ratio with a note, explicit upper and lower ends and
// lower_bound true beside kind certified-lower, and the text names no
// empty witness.
func TestCertifiedJSONLowerZero(t *testing.T) {
	req := Defaults()
	req.Mechanism, req.Bound, req.N, req.K, req.Eps0, req.Steps, req.Delta = "subsampled-shuffle", BoundCertified, 3, 1, 0.5, 1, 0.1
	a, err := Evaluate(req)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := a.WriteJSON(&b); err != nil {
		t.Fatalf("WriteJSON: %v", err)
	}
	var v map[string]any
	if err := json.Unmarshal(b.Bytes(), &v); err != nil {
		t.Fatal(err)
	}
	if v["kind"] != accounting.KindCertifiedLower || v["lower_bound"] != true || v["lower"] != 0.0 || v["upper"] == nil {
		t.Errorf("kind %v lower_bound %v lower %v upper %v, want certified-lower, true, 0, a number", v["kind"], v["lower_bound"], v["lower"], v["upper"])
	}
	if r, ok := v["ratio"]; ok && r != nil {
		t.Errorf("ratio %v, want null", r)
	}
	if note, _ := v["ratio_note"].(string); !strings.Contains(note, "lower end is 0") {
		t.Errorf("ratio_note %q", note)
	}
	b.Reset()
	if err := a.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if s := b.String(); strings.Contains(s, "exact epsilon of )") || strings.Contains(s, "Inf") || !strings.Contains(s, "no ratio") {
		t.Errorf("text:\n%s", s)
	}
}

// TestRowEnds: every kind's explicit ends.
func TestRowEnds(t *testing.T) {
	f := func(p *float64) any {
		if p == nil {
			return nil
		}
		return *p
	}
	r := Row{Bound: "best", Epsilon: 0.5}
	r.Ends()
	if r.Kind != accounting.KindUpper || r.Lower || f(r.Upper) != 0.5 || r.LowerEnd != nil {
		t.Errorf("upper row: %+v", r)
	}
	r = Row{Bound: accounting.BoundKRR3Lower, Epsilon: 0.5, Lower: true}
	r.Ends()
	if r.Kind != accounting.KindRDPLower || !r.Lower || r.Upper != nil || r.LowerEnd != nil {
		t.Errorf("rdp-lower row: %+v", r)
	}
	ratio := 2.0
	r = Row{Bound: BoundCertified, Kind: accounting.KindCertifiedLower, Epsilon: 0.25, Interval: []float64{0.25, 0.5}, Ratio: &ratio}
	r.Ends()
	if !r.Lower || f(r.Upper) != 0.5 || f(r.LowerEnd) != 0.25 || f(r.Ratio) != 2.0 || r.RatioNote != "" {
		t.Errorf("certified row: %+v", r)
	}
}

// TestCalibrateRefusesCertified: the certified row's epsilon is a lower
// bound; calibrating to it would guarantee nothing.
func TestCalibrateRefusesCertified(t *testing.T) {
	req := Defaults()
	req.Mechanism, req.Bound, req.N, req.K, req.Eps0, req.Steps, req.Delta = "subsampled-shuffle", BoundCertified, 1000, 10, 0.5, 10, 1e-5
	if _, err := Calibrate(req, "steps", 1); err == nil || !strings.Contains(err.Error(), "lower bound") {
		t.Errorf("calibrate to certified: %v, want a refusal naming a lower bound", err)
	}
}
