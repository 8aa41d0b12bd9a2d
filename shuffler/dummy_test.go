package shuffler

import (
	"bytes"
	"context"
	"errors"
	"math"
	"testing"

	"github.com/shuffledp/shuffledp/protocol"
	"github.com/shuffledp/shuffledp/randomizer"
)

// dummyRun is a run whose reports are R_inf of dimension 4, HPKE-sealed.
func dummyRun(t testing.TB, n, k int) (protocol.RunConfig, *protocol.HPKESealer, *protocol.HPKEOpener, randomizer.Randomizer) {
	t.Helper()
	run := protocol.RunConfig{Run: "run", Model: "logreg", Dim: 4, Randomizer: "rinf", ClipNorm: protocol.NormL2,
		Clip: 1, Eps0: 1, Population: n, PerRound: k, MinBatch: k}
	r, err := protocol.NewRandomizer(run)
	if err != nil {
		t.Fatal(err)
	}
	run.ReportBytes = r.ReportSize() + protocol.HPKEOverhead
	key, err := protocol.GenerateKey(1)
	if err != nil {
		t.Fatal(err)
	}
	sealer, err := protocol.NewHPKESealer(key.Config, r.ReportSize())
	if err != nil {
		t.Fatal(err)
	}
	opener, err := protocol.NewHPKEOpener(r.ReportSize(), key)
	if err != nil {
		t.Fatal(err)
	}
	return run, sealer, opener, r
}

// TestReleaseWithDummies: with Dummies a round in which some sampled
// clients did not deliver is released with exactly k reports, the missing
// ones dummies of the run's length and header form (the round's key, a
// fresh report id), each a valid sealed report for the round; the budget
// is debited for k reports (a complete round), and only the Release the
// caller gets says how many were dummies.
func TestReleaseWithDummies(t *testing.T) {
	run, sealer, opener, rz := dummyRun(t, 10, 4)
	dummies, err := NewDummyReports(run, sealer, nil)
	if err != nil {
		t.Fatal(err)
	}
	for missing := 0; missing <= 4; missing++ {
		f := newFixture(t, ServiceConfig{Run: run, Dummies: dummies})
		r, err := f.svc.Open(context.Background(), protocol.Model{Run: "run", Params: make([]float64, 4)})
		if err != nil {
			t.Fatal(err)
		}
		clientIDs := map[[protocol.ReportIDSize]byte]bool{}
		for i, c := range f.svc.Sampled() {
			if i < missing {
				continue
			}
			rep, err := rz.Randomize([]float64{0.5, 0, 0, 0}, randomizer.NewCryptoSource())
			if err != nil {
				t.Fatal(err)
			}
			sealed, err := sealer.Seal(r.Binding(), rep)
			if err != nil {
				t.Fatal(err)
			}
			id, _ := protocol.ReportID(sealed)
			clientIDs[id] = true
			if err := f.svc.Submit(c, r.ID, sealed); err != nil {
				t.Fatal(err)
			}
		}
		var got []protocol.Batch
		rel, err := f.svc.Release(context.Background(), f.forward(&got))
		if err != nil {
			t.Fatalf("%d missing: %v", missing, err)
		}
		if rel.Reports != 4 || rel.Dummies != missing || len(got) != 1 || len(got[0].Reports) != 4 {
			t.Fatalf("%d missing: release %+v, %d batches", missing, rel, len(got))
		}
		if len(f.budget.releases) != 1 || f.budget.releases[0].Reports != 4 || f.budget.releases[0].Dummies != 0 {
			t.Fatalf("%d missing: the budget saw %+v, want one complete round and no dummy count", missing, f.budget.releases)
		}
		ids, dummy := map[[protocol.ReportIDSize]byte]bool{}, 0
		for _, s := range got[0].Reports {
			h, err := protocol.ParseHeader(s)
			if err != nil || len(s) != run.ReportBytes || h.KeyID != 1 || ids[h.ReportID] {
				t.Fatalf("%d missing: report of %d bytes, header %+v, %v", missing, len(s), h, err)
			}
			ids[h.ReportID] = true
			if !clientIDs[h.ReportID] {
				dummy++
			}
			rep, err := opener.Open(got[0].Binding(), s)
			if err != nil {
				t.Fatalf("%d missing: a report does not open at the server: %v", missing, err)
			}
			if _, err := rz.Decode(rep); err != nil {
				t.Fatalf("%d missing: a report does not decode: %v", missing, err)
			}
		}
		if dummy != missing {
			t.Fatalf("%d missing: %d reports are not the clients'", missing, dummy)
		}
	}
}

// TestDummyIsReportOfX0: the server-side decode of a dummy is a report of
// the run's randomizer applied to x0 = 0: over 4000 dummies the frequency
// of each R_inf output matches OutputProbabilities(0) (chi-square, 7
// degrees of freedom, threshold 40: p < 1e-5) and the decoded mean is
// within 5 standard errors of 0. A dummy maker whose randomizer input was
// not x0 (the control: e_1) fails the same check.
func TestDummyIsReportOfX0(t *testing.T) {
	run, sealer, opener, rz := dummyRun(t, 10, 4)
	d, err := NewDummyReports(run, sealer, nil)
	if err != nil {
		t.Fatal(err)
	}
	disc := rz.(randomizer.Discrete)
	chi := func(d *DummyReports) (float64, []float64) {
		const draws = 4000
		counts := make([]float64, disc.NumOutputs())
		mean := make([]float64, 4)
		round := protocol.Round{ID: 7, Model: protocol.Model{Run: "run"}}
		for range draws {
			s, err := d.Make(round)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := opener.Open(round.Binding(), s)
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for i := range counts {
				if bytes.Equal(disc.Output(i), rep) {
					counts[i]++
					found = true
				}
			}
			if !found {
				t.Fatalf("dummy %x is not an output of the randomizer", rep)
			}
			v, err := rz.Decode(rep)
			if err != nil {
				t.Fatal(err)
			}
			for j := range mean {
				mean[j] += v[j] / draws
			}
		}
		p := make([]float64, len(counts))
		if err := disc.OutputProbabilities(make([]float64, 4), p); err != nil {
			t.Fatal(err)
		}
		x2 := 0.0
		for i, c := range counts {
			e := p[i] * draws
			x2 += (c - e) * (c - e) / e
		}
		return x2, mean
	}
	x2, mean := chi(d)
	if x2 > 40 {
		t.Fatalf("dummies' outputs do not follow R(0): chi-square %.1f", x2)
	}
	v, _ := rz.Decode(disc.Output(0))
	se := math.Abs(v[0]) / math.Sqrt(4000)
	for j, m := range mean {
		if math.Abs(m) > 5*se {
			t.Fatalf("decoded mean of coordinate %d: %g, want 0 within %g", j, m, 5*se)
		}
	}
	// Control: the same check rejects dummies of another input.
	wrong := &DummyReports{rand: d.rand, sealer: d.sealer, noise: d.noise, x0: []float64{1, 0, 0, 0}, size: d.size}
	if x2, _ := chi(wrong); x2 <= 40 {
		t.Fatalf("dummies of e_1 pass the R(0) check (chi-square %.1f): the check cannot fail", x2)
	}
}

// TestDummyReportsRefuses: a sealer whose reports would not have the run's
// length, and a run without reports, are refused.
func TestDummyReportsRefuses(t *testing.T) {
	run, sealer, _, _ := dummyRun(t, 10, 4)
	short := run
	short.ReportBytes--
	if _, err := NewDummyReports(short, sealer, nil); err == nil {
		t.Fatal("a run one byte shorter than the sealer's reports was accepted")
	}
	none := run
	none.Randomizer = protocol.RandomizerNone
	if _, err := NewDummyReports(none, sealer, nil); err == nil {
		t.Fatal("randomizer none was accepted")
	}
	if _, err := NewDummyReports(run, nil, nil); err == nil {
		t.Fatal("a nil sealer was accepted")
	}
}

// failingDummies makes no dummy.
type failingDummies struct{}

func (failingDummies) Dummy(protocol.Round, int) ([]byte, error) {
	return nil, errors.New("no entropy")
}

// TestReleaseDummyError: a round whose dummy cannot be made is not
// released and nothing is debited.
func TestReleaseDummyError(t *testing.T) {
	run, _, _, _ := dummyRun(t, 10, 4)
	f := newFixture(t, ServiceConfig{Run: run, Dummies: failingDummies{}})
	if _, err := f.svc.Open(context.Background(), protocol.Model{Run: "run", Params: make([]float64, 4)}); err != nil {
		t.Fatal(err)
	}
	var got []protocol.Batch
	if _, err := f.svc.Release(context.Background(), f.forward(&got)); err == nil || len(got) != 0 || len(f.budget.releases) != 0 {
		t.Fatalf("Release with a failing dummy source: %v, %d batches, %d debits", err, len(got), len(f.budget.releases))
	}
}

// BenchmarkDummyReport is the cost of one dummy report (R_inf of the zero
// vector at dimension 26010, the CNN of NeurIPS'21 Table 1, HPKE-sealed):
// a deployment precomputes k of them per round.
func BenchmarkDummyReport(b *testing.B) {
	run := protocol.RunConfig{Run: "run", Model: "cnn", Dim: 26010, Randomizer: "rinf", ClipNorm: protocol.NormLInf,
		Clip: 1, Eps0: 1, Population: 10, PerRound: 4, MinBatch: 4}
	r, err := protocol.NewRandomizer(run)
	if err != nil {
		b.Fatal(err)
	}
	run.ReportBytes = r.ReportSize() + protocol.HPKEOverhead
	key, err := protocol.GenerateKey(1)
	if err != nil {
		b.Fatal(err)
	}
	sealer, err := protocol.NewHPKESealer(key.Config, r.ReportSize())
	if err != nil {
		b.Fatal(err)
	}
	d, err := NewDummyReports(run, sealer, nil)
	if err != nil {
		b.Fatal(err)
	}
	round := protocol.Round{ID: 1, Model: protocol.Model{Run: "run"}}
	for b.Loop() {
		if _, err := d.Make(round); err != nil {
			b.Fatal(err)
		}
	}
}
