package shuffler

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/shuffledp/shuffledp/protocol"
	"github.com/shuffledp/shuffledp/randomizer"
)

// checkInRun is a check-in run: n clients, rate 0.5, expected batch n/2,
// minimum batch 1.
func checkInRun(n int) protocol.RunConfig {
	return protocol.RunConfig{Run: "run", Model: "logreg", Dim: 4, Randomizer: protocol.RandomizerGaussian, ClipNorm: protocol.NormL2,
		Clip: 1, Sigma: 1, Population: n, PerRound: n / 2, MinBatch: 1, ReportBytes: 3,
		Participation: protocol.ParticipationCheckIn, Rate: 0.5}
}

// TestServiceCheckIn: under check-in the service samples nobody, takes one
// report from any client of the run (not two, none from outside the run,
// none of another length), releases whatever arrived, however many,
// permuted, debiting the budget with that number before forwarding; a round
// where nobody reported is discarded and not debited.
func TestServiceCheckIn(t *testing.T) {
	var log []string
	budget := &fakeBudget{log: &log}
	svc, err := NewService(ServiceConfig{Run: checkInRun(10), Budget: budget, Randomness: newSeeded(t, 10, 1, 3)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for r, reporters := range [][]int{{9, 0, 4}, {1, 2, 3, 5, 6, 7, 8}, {}} {
		round, err := svc.Open(ctx, protocol.Model{Run: "run"})
		if err != nil {
			t.Fatal(err)
		}
		if s := svc.Sampled(); len(s) != 0 {
			t.Fatalf("round %d: sampled %v under check-in", r, s)
		}
		for _, c := range reporters {
			if err := svc.Submit(c, round.ID, []byte{byte(c), 0, 0}); err != nil {
				t.Fatalf("client %d: %v", c, err)
			}
		}
		if len(reporters) > 0 {
			if err := svc.Submit(reporters[0], round.ID, []byte{1, 2, 3}); !errors.Is(err, ErrDuplicate) {
				t.Errorf("second report: %v, want ErrDuplicate", err)
			}
		}
		if err := svc.Submit(10, round.ID, []byte{1, 2, 3}); !errors.Is(err, ErrNotSampled) {
			t.Errorf("client 10 of 10: %v, want ErrNotSampled", err)
		}
		if err := svc.Submit(3, round.ID, []byte{1}); !errors.Is(err, ErrReportLength) && !slices.Contains(reporters, 3) {
			t.Errorf("short report: %v, want ErrReportLength", err)
		}
		var got []int
		debits := len(budget.releases)
		rel, err := svc.Release(ctx, func(_ context.Context, b protocol.Batch) error {
			if len(budget.releases) != debits+1 {
				t.Error("forwarded before the debit")
			}
			for _, rep := range b.Reports {
				got = append(got, int(rep[0]))
			}
			return nil
		})
		if len(reporters) == 0 {
			if !errors.Is(err, ErrBatchTooSmall) || len(budget.releases) != debits || got != nil {
				t.Fatalf("empty round: %v, %d debits, forwarded %v", err, len(budget.releases)-debits, got)
			}
			continue
		}
		if err != nil || rel.Reports != len(reporters) || budget.releases[debits].Reports != len(reporters) {
			t.Fatalf("round %d: %+v, %v; debited %+v", r, rel, err, budget.releases[debits])
		}
		want := slices.Sorted(slices.Values(reporters))
		if slices.Sort(got); !slices.Equal(got, want) {
			t.Errorf("round %d: released %v, want the reports of %v", r, got, want)
		}
	}
}

// fakeDummies returns dummy report {0xdd, slot, 0} of the run's length 3.
type fakeDummies struct{ made int }

func (d *fakeDummies) Dummy(_ protocol.Round, slot int) ([]byte, error) {
	d.made++
	return []byte{0xdd, byte(slot), 0}, nil
}

// seededCheckIn is a seeded CheckInSelector (tests only).
type seededCheckIn struct{ src randomizer.Source }

func (s *seededCheckIn) Round([]int) (randomizer.Source, error) { return s.src, nil }
func (s *seededCheckIn) CheckIn(n int, rate float64, sel []int) ([]int, randomizer.Source, error) {
	return checkInCoins(s.src, n, rate, sel)
}

// TestServiceSelectCheckIn: with SelectCheckIn the service flips every
// client's coin: Sampled lists the selected clients (each selected at the
// run's rate, independently: checked over 4,000 rounds), Submit refuses the
// others, and Release pads every selected client that did not deliver with
// a dummy, so the batch and the debit have exactly as many reports as
// clients were selected, whoever delivered.
func TestServiceSelectCheckIn(t *testing.T) {
	const n, rounds = 200, 1000
	run := checkInRun(n)
	run.Rate = 0.25 // (3/4)^200 < 2^-64
	var log []string
	budget := &fakeBudget{log: &log}
	dummies := &fakeDummies{}
	svc, err := NewService(ServiceConfig{Run: run, Budget: budget, Dummies: dummies, SelectCheckIn: true,
		Randomness: &seededCheckIn{src: randomizer.NewSeededSource(9)}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	perClient := make([]int, n)
	total := 0
	for r := range rounds {
		round, err := svc.Open(ctx, protocol.Model{Run: "run"})
		if err != nil {
			t.Fatal(err)
		}
		sel := slices.Clone(svc.Sampled())
		if len(sel) < run.MinBatch || !slices.IsSorted(sel) {
			t.Fatalf("round %d: selected %v", r, sel)
		}
		total += len(sel)
		for c := range n {
			in := slices.Contains(sel, c)
			if in {
				perClient[c]++
			}
			err := svc.Submit(c, round.ID, []byte{byte(c), 1, 0})
			if in != (err == nil) || (!in && !errors.Is(err, ErrNotSampled)) {
				t.Fatalf("round %d client %d selected=%v: submit %v", r, c, in, err)
			}
		}
		before := dummies.made
		var got [][]byte
		rel, err := svc.Release(ctx, func(_ context.Context, b protocol.Batch) error { got = b.Reports; return nil })
		if err != nil {
			t.Fatalf("round %d: %v", r, err)
		}
		if rel.Reports != len(sel) || len(got) != len(sel) || budget.releases[len(budget.releases)-1].Reports != len(sel) || dummies.made != before {
			t.Fatalf("round %d: released %d (%d dummies), debited %+v, for %d selected", r, len(got), dummies.made-before, budget.releases[len(budget.releases)-1], len(sel))
		}
	}
	// Each client's frequency within 5 standard deviations of the rate,
	// and the mean batch size within 5 of n * rate.
	sd := math.Sqrt(rounds * 0.25 * 0.75)
	for c, k := range perClient {
		if math.Abs(float64(k)-rounds*0.25) > 5*sd {
			t.Errorf("client %d selected in %d of %d rounds at rate 0.25", c, k, rounds)
		}
	}
	if mean, sdm := float64(total)/rounds, math.Sqrt(n*0.25*0.75/rounds); math.Abs(mean-n*0.25) > 5*sdm {
		t.Errorf("mean batch %.3f, want %g +- %.3f", mean, n*0.25, 5*sdm)
	}

	// Selected clients that do not deliver are padded: the batch keeps its size.
	round, err := svc.Open(ctx, protocol.Model{Run: "run"})
	if err != nil {
		t.Fatal(err)
	}
	sel := slices.Clone(svc.Sampled())
	if err := svc.Submit(sel[0], round.ID, []byte{byte(sel[0]), 1, 0}); err != nil {
		t.Fatal(err)
	}
	before := dummies.made
	var got [][]byte
	rel, err := svc.Release(ctx, func(_ context.Context, b protocol.Batch) error { got = b.Reports; return nil })
	if err != nil || rel.Reports != len(sel) || rel.Dummies != len(sel)-1 || dummies.made-before != len(sel)-1 || len(got) != len(sel) {
		t.Fatalf("one of %d selected delivered: %+v, %v; %d dummies made, %d released", len(sel), rel, err, dummies.made-before, len(got))
	}
}

// TestServiceSelectCheckInRefuses: check-in selection is for check-in runs
// whose empty draw has probability at most 2^-64, with a Randomness that
// flips coins.
func TestServiceSelectCheckInRefuses(t *testing.T) {
	small := checkInRun(10) // (1/2)^10 > 2^-64
	for _, c := range []struct {
		cfg  ServiceConfig
		want string
	}{
		{ServiceConfig{Run: runCfg(10, 4, 4, 3), SelectCheckIn: true}, "participation"},
		{ServiceConfig{Run: small, SelectCheckIn: true}, "(1-rate)^clients"},
		{ServiceConfig{Run: func() protocol.RunConfig { r := small; r.Rate = 0.99999; return r }(), SelectCheckIn: true,
			Randomness: newSeeded(t, 10, 5, 1)}, "CheckInSelector"},
	} {
		c.cfg.Budget = &fakeBudget{log: new([]string)}
		if _, err := NewService(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error naming %q", c.cfg.Run, err, c.want)
		}
	}
}
