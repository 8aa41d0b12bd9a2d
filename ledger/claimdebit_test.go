package ledger

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"
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
			if got, err := s.(ReportIDStore).ClaimReportIDs(ctx, "r", 7, ids(5, 6)); err != nil || !slices.Equal(got, ids(5, 6)) {
				t.Errorf("round 1's ids: replays %x, %v; want both", got, err)
			}
			// Round 0's ids were pruned with round 1's debit: a report of
			// round 0 does not open in a later round (docs/report-ids.md).
			if got, err := s.(ReportIDStore).ClaimReportIDs(ctx, "r", 8, ids(1, 2)); err != nil || got != nil {
				t.Errorf("round 0's ids after round 1's debit: replays %x, %v; want pruned", got, err)
			}
		})
	}
}

// downgradeToVersion2 rewrites the report IDs of s in schema version 2's
// layout (one row per ID in report_ids, without version 3's index) and
// sets the schema version to 2, as a version-2 program left the ledger; it
// returns the number of (run, round) groups of IDs by run.
func downgradeToVersion2(t *testing.T, s *SQLStore) map[string]int {
	t.Helper()
	ctx := context.Background()
	type row struct {
		run   string
		round int64
		ids   []byte
	}
	var stored []row
	rows, err := s.db.QueryContext(ctx, `SELECT run, round, ids FROM report_id_rounds`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.run, &r.round, &r.ids); err != nil {
			t.Fatal(err)
		}
		stored = append(stored, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	insert := `INSERT INTO report_ids (run, id, round) VALUES ($1, $2, $3)`
	if s.d.name == "postgres" {
		insert = `INSERT INTO report_ids (run, id, round) VALUES ($1, CAST(encode($2::bytea, 'hex') AS uuid), $3)`
	}
	stmts := append(slices.Clone(s.d.migrations[1]), `DROP TABLE report_id_rounds`, `UPDATE meta SET value = '2' WHERE key = 'schema_version'`)
	for _, stmt := range stmts {
		if _, err := s.db.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	groups := map[string]int{}
	for _, r := range stored {
		groups[r.run]++
		for i := 0; i < len(r.ids); i += 16 {
			if _, err := s.db.ExecContext(ctx, insert, r.run, r.ids[i:i+16], r.round); err != nil {
				t.Fatal(err)
			}
		}
	}
	return groups
}

// storedIDs counts the report IDs a store holds for run, by round.
func storedIDs(t testing.TB, s Store, run string) map[int64]int {
	t.Helper()
	switch s := s.(type) {
	case *MemoryStore:
		s.mu.Lock()
		defer s.mu.Unlock()
		out := map[int64]int{}
		for _, r := range s.reportIDs[run] {
			out[r]++
		}
		return out
	case *SQLStore:
		q := `SELECT round, length(ids) / 16 FROM report_id_rounds WHERE run = $1`
		if v, err := s.version(context.Background(), s.db); err != nil {
			t.Fatal(err)
		} else if v < 4 {
			q = `SELECT round, count(*) FROM report_ids WHERE run = $1 GROUP BY round`
		}
		rows, err := s.db.QueryContext(context.Background(), q, run)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[int64]int{}
		for rows.Next() {
			var r int64
			var n int
			if err := rows.Scan(&r, &n); err != nil {
				t.Fatal(err)
			}
			out[r] = n
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	t.Fatalf("store %T", s)
	return nil
}

// DebitClaiming of round r deletes the ids of the rounds below r in its
// own write, so the store holds one round's ids however many rounds
// passed; a debit that is refused or fails (replay, conflict, stale view)
// deletes nothing; ids claimed on their own for a later round stay; other
// runs are untouched; and a retried debit of the last round is idempotent.
func TestDebitClaimingPrunes(t *testing.T) {
	ctx := context.Background()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			s := b.open(t)
			defer s.Close()
			l := openLedger(t, s, "r", Options{Target: 1e9})
			other := openLedger(t, s, "other", Options{Target: 1e9})
			if r, err := other.DebitClaiming(ctx, 0, subsampled, 2, digest(0), ids(1, 2)); err != nil || r != nil {
				t.Fatal(r, err)
			}
			byRound := func(r int64) [][16]byte { return ids(byte(2*r+10), byte(2*r+11)) }
			for r := range int64(20) {
				if rep, err := l.DebitClaiming(ctx, r, subsampled, 2, digest(r), byRound(r)); err != nil || rep != nil {
					t.Fatalf("round %d: %x, %v", r, rep, err)
				}
				if got := storedIDs(t, s, "r"); len(got) != 1 || got[r] != 2 {
					t.Fatalf("after round %d: ids by round %v, want only round %d's 2", r, got, r)
				}
			}
			// The retry of the last debited round: nothing written, no replay.
			if rep, err := l.DebitClaiming(ctx, 19, subsampled, 2, digest(19), byRound(19)); err != nil || rep != nil {
				t.Fatalf("retry of round 19: %x, %v", rep, err)
			}
			// A replay of the last round's id into the next round is refused
			// by the store; nothing is written or pruned.
			rep, err := l.DebitClaiming(ctx, 20, subsampled, 2, digest(20), [][16]byte{byRound(19)[0], byRound(20)[0]})
			if !errors.Is(err, ErrReplayed) || !slices.Equal(rep, byRound(19)[:1]) {
				t.Fatalf("round 20 replaying round 19's id: %x, %v", rep, err)
			}
			// A store write refused as a conflict (another writer debited
			// round 20 with another batch) prunes nothing either.
			ca := s.(ClaimAppender)
			e := Entry{Run: "r", Round: 20, Event: subsampled, Reports: 2, Digest: digest(20), Time: time.Now()}
			if existed, rep, err := ca.AppendClaiming(ctx, e, -1, byRound(20)); err != nil || existed || rep != nil {
				t.Fatalf("round 20 by another writer: %v %x %v", existed, rep, err)
			}
			if got := storedIDs(t, s, "r"); len(got) != 1 || got[20] != 2 {
				t.Fatalf("after round 20: ids by round %v, want only round 20's", got)
			}
			e.Round, e.Digest = 21, digest(21)
			if _, _, err := ca.AppendClaiming(ctx, e, 0, byRound(21)); !errors.Is(err, ErrStale) {
				t.Fatalf("round 21 on a stale view: %v, want ErrStale", err)
			}
			e.Round, e.Digest = 20, digest(99)
			if _, _, err := ca.AppendClaiming(ctx, e, -1, byRound(21)); !errors.Is(err, ErrConflict) {
				t.Fatalf("round 20 again with another digest: %v, want ErrConflict", err)
			}
			if got := storedIDs(t, s, "r"); len(got) != 1 || got[20] != 2 {
				t.Fatalf("after the refused writes: ids by round %v, want only round 20's", got)
			}
			// Ids claimed on their own for a later round survive a debit
			// below that round.
			if rep, err := s.(ReportIDStore).ClaimReportIDs(ctx, "r", 30, byRound(30)); err != nil || rep != nil {
				t.Fatal(rep, err)
			}
			e.Round, e.Digest = 21, digest(21)
			if _, _, err := ca.AppendClaiming(ctx, e, -1, byRound(21)); err != nil {
				t.Fatal(err)
			}
			if got := storedIDs(t, s, "r"); len(got) != 2 || got[21] != 2 || got[30] != 2 {
				t.Fatalf("after round 21: ids by round %v, want rounds 21 and 30", got)
			}
			if got := storedIDs(t, s, "other"); len(got) != 1 || got[0] != 2 {
				t.Fatalf("the other run's ids: %v, want its round 0's", got)
			}
			if err := s.Check(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A version-2 ledger, which kept every report ID, is migrated to version 3
// on open for writing: the index (run, round) is made and the IDs of the
// rounds below each run's last debited round are deleted once (those of
// the last debited round, of a later round, and of a run without entries
// stay); later debits delete as TestDebitClaimingPrunes shows.
//
// The ledger opened is then at version 4, a round's IDs one row of
// report_id_rounds: the IDs read back by round are those version 2 kept
// and the migration to 3 did not delete, and a replay of a migrated ID
// into another round is still refused.
func TestMigrationToVersion3Prunes(t *testing.T) {
	ctx := context.Background()
	for _, b := range sharedBackends {
		t.Run(b.name, func(t *testing.T) {
			target := b.target(t)
			s := openTarget(t, target).(*SQLStore)
			l := openLedger(t, s, "r", Options{Target: 1e9})
			for r := range int64(3) { // debits of rounds 0, 1, 2, and their ids, as version 2 kept them
				debit(t, l, r, subsampled)
				if rep, err := s.ClaimReportIDs(ctx, "r", r, ids(byte(10+r))); err != nil || rep != nil {
					t.Fatal(rep, err)
				}
			}
			mustRegister(t, s, "idle")
			for _, c := range []struct {
				run   string
				round int64
				id    byte
			}{{"r", 7, 20}, {"idle", 0, 30}} {
				if rep, err := s.ClaimReportIDs(ctx, c.run, c.round, ids(c.id)); err != nil || rep != nil {
					t.Fatal(rep, err)
				}
			}
			if got := downgradeToVersion2(t, s); got["r"] != 4 || got["idle"] != 1 {
				t.Fatalf("version 2: rounds of ids by run %v, want r: rounds 0, 1, 2 and 7; idle: round 0", got)
			}
			if v, err := s.version(ctx, s.db); v != 2 || err != nil {
				t.Fatalf("version %d, %v; want 2", v, err)
			}
			s.Close()
			s = openTarget(t, target).(*SQLStore)
			defer s.Close()
			if v, err := s.version(ctx, s.db); v != SchemaVersion || err != nil {
				t.Fatalf("after the migration: version %d, %v; want %d", v, err, SchemaVersion)
			}
			if got := storedIDs(t, s, "r"); len(got) != 2 || got[2] != 1 || got[7] != 1 {
				t.Errorf("after the migration: ids by round %v, want rounds 2 and 7", got)
			}
			if got := storedIDs(t, s, "idle"); len(got) != 1 || got[0] != 1 {
				t.Errorf("after the migration: the run without entries has ids by round %v, want its round 0's", got)
			}
			if rep, err := s.ClaimReportIDs(ctx, "r", 8, append(ids(20), ids(40)...)); err != nil || len(rep) != 1 || rep[0] != ids(20)[0] {
				t.Errorf("a migrated round 7 id claimed in round 8: replays %x, %v; want the one id", rep, err)
			}
			if err := s.Check(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}
