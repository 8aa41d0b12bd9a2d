package shuffler

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/shuffledp/shuffledp/protocol"
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
