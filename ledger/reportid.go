package ledger

import (
	"context"
	"fmt"
)

// ReportIDStore records the report IDs a shuffler has accepted, durably,
// so that a report replayed into another open round (or after a restart)
// is recognised and rejected. A report ID is the random 16-byte identifier in
// a sealed report's clear header (protocol.ReportID); it is unique per
// report with overwhelming probability, so one seen twice is a replay.
//
// Replay rejection in the style of the IETF DAP draft (draft-ietf-ppm-dap,
// "report ID" uniqueness) and Janus, which keep report IDs under a UNIQUE
// key. Unlike a store of every ID of a run, the ids of closed rounds are
// forgotten: ClaimAppender.AppendClaiming of round r deletes the ids
// recorded under rounds below r in its transaction, so the store holds the
// ids of the last debited round (and of later rounds claimed since), and
// a claim costs the same however many ids the run has seen. This is sound
// because every report is sealed for its (run, round), which is in the
// HPKE associated data the server checks (protocol.HPKESealer): a report
// of a closed round replayed into a later one does not open there. See
// docs/report-ids.md.
type ReportIDStore interface {
	// ClaimReportIDs records ids as accepted for round of run, in one
	// atomic write, and returns the ids it refuses as replays:
	//
	//   - an id not yet recorded for run is inserted under round (not a
	//     replay);
	//   - an id already recorded for the same (run, round) is fine and not
	//     a replay, so that a shuffler that crashed after claiming and
	//     collects the round again can claim it again (idempotent);
	//   - an id already recorded under a different round of run is a
	//     replay: it is returned and not inserted again (its round stays
	//     the first one);
	//   - an id that occurs more than once in ids is claimed at its first
	//     occurrence, and every later occurrence is returned as a replay
	//     (two reports of one batch with one ID are one report sent twice).
	//
	// Replays are returned in the order of ids (a duplicate once per extra
	// occurrence); nil when there are none. IDs are scoped by run: the same
	// id in another run is not a replay. When err is non-nil nothing was
	// recorded and replays is nil; the call may be retried.
	ClaimReportIDs(ctx context.Context, run string, round int64, ids [][16]byte) (replays [][16]byte, err error)
}

// ClaimAppender claims a round's report IDs and appends its entry in one
// atomic write, so that a released round costs one commit (one fsync)
// instead of two. Implemented by SQLStore and MemoryStore; used by
// Ledger.DebitClaiming.
type ClaimAppender interface {
	// AppendClaiming is ClaimReportIDs(e.Run, e.Round, ids) and Append(e,
	// seen) in one write, all or nothing. If an id is a replay (repeated
	// in ids, or recorded under another round of e.Run), nothing is
	// written and replays lists them as ClaimReportIDs would; otherwise it
	// is Append, whose existed, ErrConflict and ErrStale outcomes write no
	// ids either (a retry of a committed round finds its ids under that
	// same round: no replay). When the entry is appended, the ids of
	// e.Run recorded under rounds below e.Round are deleted in the same
	// write (the ledger debits a round only above every debited one, so
	// those rounds are closed): a write that fails or is refused deletes
	// none.
	//
	// ClaimReportIDs on its own deletes nothing.
	AppendClaiming(ctx context.Context, e Entry, seen int64, ids [][16]byte) (existed bool, replays [][16]byte, err error)
}

// Backend is a Store that also keeps report IDs: what OpenStore returns,
// implemented by SQLStore (SQLite and PostgreSQL) and MemoryStore.
type Backend interface {
	Store
	ReportIDStore
}

var (
	_ Backend       = (*MemoryStore)(nil)
	_ ClaimAppender = (*MemoryStore)(nil)
	_ ClaimAppender = (*SQLStore)(nil)
)

// validateClaim checks the run and round of a ClaimReportIDs call.
func validateClaim(run string, round int64) error {
	if err := ValidateRun(run); err != nil {
		return err
	}
	if round < 0 {
		return fmt.Errorf("round must be >= 0, got %d", round)
	}
	return nil
}

// claimPlan splits the ids of one ClaimReportIDs call: unique holds each
// distinct id once, in order of first occurrence; dup[i] is true when
// ids[i] repeats an earlier element (a replay whatever the store holds).
func claimPlan(ids [][16]byte) (unique [][16]byte, dup []bool) {
	seen := make(map[[16]byte]struct{}, len(ids))
	unique = make([][16]byte, 0, len(ids))
	for i, id := range ids {
		if _, ok := seen[id]; ok {
			if dup == nil {
				dup = make([]bool, len(ids))
			}
			dup[i] = true
			continue
		}
		seen[id] = struct{}{}
		unique = append(unique, id)
	}
	return unique, dup
}

// claimReplays lists the replays of ids in their order: every repeated
// occurrence (dup) and every first occurrence recorded under another round
// (other).
func claimReplays(ids [][16]byte, dup []bool, other map[[16]byte]bool) [][16]byte {
	var out [][16]byte
	for i, id := range ids {
		if (dup != nil && dup[i]) || other[id] {
			out = append(out, id)
		}
	}
	return out
}
