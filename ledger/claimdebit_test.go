package ledger

import (
	"context"
	"errors"
	"slices"
	"testing"
)

// AppendClaiming writes a round's report IDs and its entry together or not
// at all: a replay (repeated in the batch, or claimed under another
// round), a conflict, a stale view or an unknown run write neither; a retry
// of a committed round is existed, its ids no replay.
func TestAppendClaiming(t *testing.T) {
	ctx := context.Background()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			s := b.open(t)
			defer s.Close()
			ca, rs := s.(ClaimAppender), s.(ReportIDStore)
			mustRegister(t, s, "r")
			// unclaimed reports whether none of want is claimed in run r
			// (claiming them under a fresh round, which a claimed id refuses).
			fresh := int64(100)
			unclaimed := func(want [][16]byte) bool {
				fresh++
				got, err := rs.ClaimReportIDs(ctx, "r", fresh, want)
				if err != nil {
					t.Fatal(err)
				}
				return got == nil
			}
			entries := func() int {
				es, err := s.Entries(ctx, "r")
				if err != nil {
					t.Fatal(err)
				}
				return len(es)
			}

			e0 := entry("r", 0, subsampled, "b0")
			if existed, replays, err := ca.AppendClaiming(ctx, e0, 0, ids(1, 2, 3)); err != nil || existed || replays != nil {
				t.Fatalf("round 0: %v, %x, %v", existed, replays, err)
			}
			if got, err := rs.ClaimReportIDs(ctx, "r", 0, ids(1, 2, 3)); err != nil || got != nil {
				t.Errorf("re-claim of round 0's ids in round 0: %x, %v", got, err)
			}
			if existed, replays, err := ca.AppendClaiming(ctx, e0, 0, ids(1, 2, 3)); err != nil || !existed || replays != nil {
				t.Errorf("retry of round 0: %v, %x, %v; want existed", existed, replays, err)
			}

			// A replay of round 0's id 2 in round 1: nothing written.
			e1 := entry("r", 1, subsampled, "b1")
			if existed, replays, err := ca.AppendClaiming(ctx, e1, 1, ids(4, 2, 5)); err != nil || existed || !slices.Equal(replays, ids(2)) {
				t.Fatalf("round 1 with a replay: %v, %x, %v; want replays [2]", existed, replays, err)
			}
			// An id twice in one batch.
			if _, replays, err := ca.AppendClaiming(ctx, e1, 1, ids(6, 7, 6)); err != nil || !slices.Equal(replays, ids(6)) {
				t.Fatalf("round 1 with a repeated id: %x, %v; want replays [6]", replays, err)
			}
			// A stale view, a conflicting retry of round 0, an unknown run.
			if _, _, err := ca.AppendClaiming(ctx, e1, 0, ids(8)); !errors.Is(err, ErrStale) {
				t.Errorf("stale: %v, want ErrStale", err)
			}
			if _, _, err := ca.AppendClaiming(ctx, entry("r", 0, subsampled, "other"), 1, ids(9)); !errors.Is(err, ErrConflict) {
				t.Errorf("conflict: %v, want ErrConflict", err)
			}
			if _, _, err := ca.AppendClaiming(ctx, entry("nobody", 0, subsampled, "b"), 0, ids(10)); !errors.Is(err, ErrUnknownRun) {
				t.Errorf("unknown run: %v, want ErrUnknownRun", err)
			}
			if n := entries(); n != 1 {
				t.Fatalf("%d entries after the refused writes, want 1", n)
			}
			if !unclaimed(ids(4, 5, 6, 7, 8, 9, 10)) {
				t.Error("a refused write claimed report IDs")
			}
			if existed, replays, err := ca.AppendClaiming(ctx, e1, 1, ids(11, 12)); err != nil || existed || replays != nil || entries() != 2 {
				t.Errorf("round 1: %v, %x, %v", existed, replays, err)
			}
		})
	}
}

// Ledger.DebitClaiming debits a round with its report IDs, refuses one
// holding a replay with ErrReplayed (nothing debited), and a round refused
// for its budget claims no ids.
func TestDebitClaiming(t *testing.T) {
	ctx := context.Background()
	// A target between the epsilon of two rounds and of three.
	target := (accountEpsilon(t, subsampled, 2).Epsilon + accountEpsilon(t, subsampled, 3).Epsilon) / 2
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			s := b.open(t)
			defer s.Close()
			l := openLedger(t, s, "r", Options{Target: target})
			if replays, err := l.DebitClaiming(ctx, 0, subsampled, 1000, digest(0), ids(1, 2)); err != nil || replays != nil {
				t.Fatalf("round 0: %x, %v", replays, err)
			}
			replays, err := l.DebitClaiming(ctx, 1, subsampled, 1000, digest(1), ids(3, 1))
			if !errors.Is(err, ErrReplayed) || !slices.Equal(replays, ids(1)) || l.Rounds() != 1 {
				t.Fatalf("round 1 replaying id 1: %x, %v, %d rounds; want ErrReplayed [1], 1 round", replays, err, l.Rounds())
			}
			if replays, err := l.DebitClaiming(ctx, 1, subsampled, 1000, digest(1), ids(5, 6)); err != nil || replays != nil || l.Rounds() != 2 {
				t.Fatalf("round 1: %x, %v", replays, err)
			}
			if _, err := l.DebitClaiming(ctx, 2, subsampled, 1000, digest(2), ids(3, 4)); !errors.Is(err, ErrBudgetExhausted) {
				t.Fatalf("round 2 past the target: %v, want ErrBudgetExhausted", err)
			}
			if got, err := s.(ReportIDStore).ClaimReportIDs(ctx, "r", 7, ids(3, 4)); err != nil || got != nil {
				t.Errorf("the refused rounds' ids: replays %x, %v; want unclaimed", got, err)
			}
			if got, err := s.(ReportIDStore).ClaimReportIDs(ctx, "r", 7, ids(1, 2)); err != nil || !slices.Equal(got, ids(1, 2)) {
				t.Errorf("round 0's ids: replays %x, %v; want both", got, err)
			}
		})
	}
}
