package ledger

import (
	"context"
	"crypto/sha256"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/shuffledp/shuffledp/event"
)

// fixtureFile is an SQLite ledger of schema version 2 written by the
// SQLite-only store that preceded SQLStore (testdata/README.md says how),
// so that a ledger file a shuffler wrote before the SQLite and PostgreSQL
// code became one is known to open, read and extend unchanged.
const fixtureFile = "testdata/ledger-v2.db"

// fixtureRun is a run of the fixture, its parameters and its entries.
type fixtureRun struct {
	info    RunInfo
	entries []Entry
}

// fixtureRuns are the runs the fixture holds: a run of NeurIPS'21
// subsampled-shuffle rounds, and a run with its own order grid whose
// Gaussian rounds state their adjacency.
func fixtureRuns() []fixtureRun {
	at := func(i int) time.Time { return time.Date(2026, 11, 25, 12, 0, i, 1000*i+7, time.UTC) }
	mk := func(run string, round int64, ev event.Event, reports int) Entry {
		return Entry{Run: run, Round: round, Event: ev, Reports: reports,
			Digest: sha256.Sum256([]byte(fmt.Sprintf("%s batch %d", run, round))), Time: at(int(round))}
	}
	gauss := event.Event{Mechanism: event.SubsampledShuffleGaussian, N: 1000, K: 100, Sigma: 5, Adjacency: event.AdjacencyReplaceOne}
	checkin := event.Event{Mechanism: event.CheckinGaussian, N: 1000, Rate: 0.1, Sigma: 5, Adjacency: event.AdjacencyReplaceOne}
	return []fixtureRun{
		{RunInfo{Run: "mnist-eps2", Delta: 1e-5, Bound: "best"}, []Entry{
			mk("mnist-eps2", 0, subsampled, 1000), mk("mnist-eps2", 1, subsampled, 1000), mk("mnist-eps2", 3, subsampled, 998),
		}},
		{RunInfo{Run: "gauss ünïcode", Delta: 1e-6, Bound: "best", Orders: []float64{1.5, 2, 8, 64}}, []Entry{
			mk("gauss ünïcode", 0, gauss, 100), mk("gauss ünïcode", 1, checkin, 93),
		}},
	}
}

// fixtureIDs are the report IDs the fixture records for run "mnist-eps2",
// by round.
func fixtureIDs(round int64) [][16]byte {
	out := make([][16]byte, 5)
	for i := range out {
		h := sha256.Sum256([]byte(fmt.Sprintf("fixture round %d report %d", round, i)))
		out[i] = [16]byte(h[:16])
	}
	return out
}

// writeFixture fills an empty store with fixtureRuns and the report IDs of
// rounds 0 and 1.
func writeFixture(ctx context.Context, s Backend) error {
	for _, r := range fixtureRuns() {
		if _, err := s.Register(ctx, r.info); err != nil {
			return err
		}
		for i, e := range r.entries {
			if _, err := s.Append(ctx, e, int64(i)); err != nil {
				return err
			}
		}
	}
	for _, round := range []int64{0, 1} {
		if replays, err := s.ClaimReportIDs(ctx, "mnist-eps2", round, fixtureIDs(round)); err != nil || replays != nil {
			return fmt.Errorf("claim round %d: %v, %v", round, replays, err)
		}
	}
	return nil
}

// A ledger file written before the SQLite and PostgreSQL stores shared
// their code opens read-only and for writing: its runs, entries (times to
// the nanosecond) and report IDs read back as written, it passes Check,
// opened for writing it is migrated (the ids of closed rounds deleted),
// a claimed id is a replay in another round, and the run takes the next
// debit.
func TestOpenOldLedgerFile(t *testing.T) {
	ctx := context.Background()
	src, err := os.ReadFile(fixtureFile)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), FileName)
	if err := os.WriteFile(path, src, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, ro := range []bool{true, false} {
		s, err := OpenSQLite(ctx, path, SQLiteOptions{ReadOnly: ro})
		if err != nil {
			t.Fatalf("read-only %v: %v", ro, err)
		}
		runs, err := s.Runs(ctx)
		if err != nil || !slices.Equal(runs, []string{"gauss ünïcode", "mnist-eps2"}) {
			t.Errorf("read-only %v: runs %q, %v", ro, runs, err)
		}
		for _, want := range fixtureRuns() {
			info, err := s.Run(ctx, want.info.Run)
			if err != nil || sameParams(info, want.info) != "" || info.Entries != int64(len(want.entries)) {
				t.Errorf("read-only %v: run %+v, %v; want %+v", ro, info, err, want.info)
			}
			got, err := s.Entries(ctx, want.info.Run)
			if err != nil || len(got) != len(want.entries) {
				t.Fatalf("read-only %v: entries %+v, %v", ro, got, err)
			}
			for i, e := range want.entries {
				if !got[i].same(e) || !got[i].Time.Equal(e.Time) || got[i].Event != e.Event {
					t.Errorf("read-only %v: entry %d is %+v, want %+v", ro, i, got[i], e)
				}
			}
		}
		if err := s.Check(ctx); err != nil {
			t.Errorf("read-only %v: Check: %v", ro, err)
		}
		// The file is of schema version 2, which kept every id: read-only
		// it holds those of rounds 0 and 1; opened for writing it is
		// migrated to version 3, which deletes the ids of the rounds below
		// the run's last debited round (3), and to version 4 (one row per
		// round).
		wantIDs := map[int64]int{0: 5, 1: 5}
		if !ro {
			wantIDs = map[int64]int{}
		}
		if got := storedIDs(t, s, "mnist-eps2"); !maps.Equal(got, wantIDs) {
			t.Errorf("read-only %v: ids by round %v, want %v", ro, got, wantIDs)
		}
		if !ro {
			if got, err := s.ClaimReportIDs(ctx, "mnist-eps2", 2, fixtureIDs(0)); err != nil || got != nil {
				t.Errorf("ids of round 0 claimed in round 2: replays %x, %v; want none (deleted by the migration)", got, err)
			}
			if got, err := s.ClaimReportIDs(ctx, "mnist-eps2", 3, fixtureIDs(0)); err != nil || !slices.Equal(got, fixtureIDs(0)) {
				t.Errorf("ids claimed in round 2 claimed in round 3: replays %x, %v; want all", got, err)
			}
			next := Entry{Run: "mnist-eps2", Round: 4, Event: subsampled, Reports: 1000, Digest: digest(4), Time: fixedTime}
			if existed, err := s.Append(ctx, next, 3); err != nil || existed {
				t.Errorf("next debit: existed %v, %v", existed, err)
			}
			if err := s.Check(ctx); err != nil {
				t.Errorf("after writing: Check: %v", err)
			}
		}
		s.Close()
	}
}
