package ledger

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/shuffledp/shuffledp/event"
)

// BenchmarkDebit measures one Debit: pricing the event against the run's
// composition (target set, so the guarantee is computed) and committing it.
// For SQLite that is one transaction fsynced to the WAL (synchronous=FULL);
// for PostgreSQL one transaction of four statements over TCP to the test
// server (fsync off unless SHUFFLEDP_PGTEST_DURABLE=1).
func BenchmarkDebit(b *testing.B) {
	for _, bk := range backends {
		b.Run(bk.name, func(b *testing.B) {
			s := bk.open(b)
			defer s.Close()
			l := openLedger(b, s, "bench", Options{Target: 1e9})
			debit(b, l, 0, subsampled) // tabulates the curve once
			round := int64(1)
			for b.Loop() {
				debit(b, l, round, subsampled)
				round++
			}
		})
	}
}

// BenchmarkEpsilon measures Epsilon on a run of one event (the composition
// over the cached curve and the conversion at every order).
func BenchmarkEpsilon(b *testing.B) {
	l := openLedger(b, NewMemoryStore(), "bench", Options{})
	for r := range int64(100) {
		debit(b, l, r, subsampled)
	}
	for b.Loop() {
		if _, err := l.Epsilon(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkClaimDebit measures what a networked shuffler writes per
// released round of 1,000 reports: "separate" claims the report IDs
// (ClaimReportIDs, one transaction) and then debits (Debit, another),
// as the shuffler did before DebitClaiming; "combined" is DebitClaiming,
// both in one transaction: one commit, one fsync (SQLite; PostgreSQL with
// SHUFFLEDP_PGTEST_DURABLE=1) instead of two.
func BenchmarkClaimDebit(b *testing.B) {
	ctx := context.Background()
	for _, bk := range backends[1:] { // the durable ones
		for _, combined := range []bool{false, true} {
			name := bk.name + "/separate"
			if combined {
				name = bk.name + "/combined"
			}
			b.Run(name, func(b *testing.B) {
				s := bk.open(b)
				defer s.Close()
				l := openLedger(b, s, "bench", Options{Target: 1e9})
				debit(b, l, 0, subsampled) // tabulates the curve once
				round := int64(1)
				for b.Loop() {
					b.StopTimer()
					batch := randomIDs(1000)
					b.StartTimer()
					if combined {
						if r, err := l.DebitClaiming(ctx, round, subsampled, 1000, digest(round), batch); err != nil || r != nil {
							b.Fatal(r, err)
						}
					} else {
						if r, err := s.(ReportIDStore).ClaimReportIDs(ctx, "bench", round, batch); err != nil || r != nil {
							b.Fatal(r, err)
						}
						debit(b, l, round, subsampled)
					}
					round++
				}
			})
		}
	}
}

// storedSizes are the numbers of report IDs already stored in the run when
// BenchmarkClaimStored measures a claim.
var storedSizes = []struct {
	name string
	n    int
}{{"10k", 10_000}, {"100k", 100_000}, {"1M", 1_000_000}, {"10M", 10_000_000}}

// fillIDs stores n report IDs in run under round 0, in claims of at most
// 100,000: n values spread evenly over the 128-bit id space (the high 64
// bits i·2^64/n, the low 64 random), claimed in increasing order so that
// the fill appends to the key's B-tree instead of splitting random pages
// (a tree of the same height and at least as full as a random fill's).
func fillIDs(b *testing.B, s ReportIDStore, run string, n int) {
	b.Helper()
	ctx := context.Background()
	const chunk = 100_000
	step := ^uint64(0) / uint64(n)
	ids := make([][16]byte, 0, chunk)
	for lo := 0; lo < n; lo += chunk {
		ids = ids[:0]
		for i := lo; i < min(lo+chunk, n); i++ {
			var id [16]byte
			binary.BigEndian.PutUint64(id[:8], uint64(i)*step)
			binary.BigEndian.PutUint64(id[8:], rand.Uint64())
			ids = append(ids, id)
		}
		if r, err := s.ClaimReportIDs(ctx, run, 0, ids); err != nil || r != nil {
			b.Fatal(r, err)
		}
	}
}

// BenchmarkClaimStored measures one claim of 1,000 fresh random report IDs
// (a released round of k = 1,000: ClaimReportIDs, one transaction) in a run
// that already stores 10k, 100k, 1M or 10M IDs. From schema version 4 a
// claim reads the run's stored rounds (one row each, their IDs
// concatenated) and compares them in memory, so its cost grows linearly
// with the IDs stored; the debits keep that to the last debited round's
// (pruneTx; BenchmarkClaimAfterHistory), so in a run it is about one batch
// whatever the history. (Versions 2 and 3 kept one B-tree entry per ID:
// a cost growing with the tree's height and the pages a claim dirtied, at
// most one per ID.) cpu-ns/op is the process's CPU time
// (getrusage, user + system) per claim, which a loaded machine does not
// inflate as it does wall time. The 10M fill takes minutes; run one size
// with -bench 'ClaimStored/sqlite/10M'.
func BenchmarkClaimStored(b *testing.B) {
	ctx := context.Background()
	for _, bk := range backends[1:] { // the durable ones
		for _, sz := range storedSizes {
			b.Run(bk.name+"/"+sz.name, func(b *testing.B) {
				s := bk.open(b)
				defer s.Close()
				mustRegister(b, s, "bench")
				rs := s.(ReportIDStore)
				fillIDs(b, rs, "bench", sz.n)
				round := int64(1)
				var before, after syscall.Rusage
				b.ResetTimer()
				syscall.Getrusage(syscall.RUSAGE_SELF, &before)
				for b.Loop() {
					b.StopTimer()
					batch := randomIDs(1000)
					b.StartTimer()
					if r, err := rs.ClaimReportIDs(ctx, "bench", round, batch); err != nil || r != nil {
						b.Fatal(r, err)
					}
					round++
				}
				syscall.Getrusage(syscall.RUSAGE_SELF, &after)
				cpu := time.Duration(after.Utime.Nano()-before.Utime.Nano()) + time.Duration(after.Stime.Nano()-before.Stime.Nano())
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// BenchmarkClaimAfterHistory measures what the networked shuffler writes
// per released round of 1,000 reports (Ledger.DebitClaiming: the claim of
// 1,000 fresh random report IDs and the debit, one transaction) after
// 10k, 1M or 10M report IDs have passed through the run's debits: the
// setup debits rounds of 1,000 fresh random IDs, as the run would, until
// the history is reached (each such debit deletes the IDs of the round
// before it, as every debit does). Beside cpu-ns/op (getrusage, user +
// system: the claim's CPU on SQLite; PostgreSQL's server CPU is another
// process's) it reports stored-ids, the report IDs the run holds after the
// last timed round: one round's (1,000), whatever the history. With a
// store that keeps every ID (the code before the deletion) stored-ids is
// the history plus the timed rounds', and the same benchmark measures the
// claim against them. The 10M history is 10,000 debits (a minute or
// more); run one size with -bench 'ClaimAfterHistory/sqlite/10M'.
func BenchmarkClaimAfterHistory(b *testing.B) {
	ctx := context.Background()
	for _, bk := range backends[1:] { // the durable ones
		for _, sz := range []struct {
			name string
			n    int
		}{{"10k", 10_000}, {"1M", 1_000_000}, {"10M", 10_000_000}} {
			b.Run(bk.name+"/"+sz.name, func(b *testing.B) {
				s := bk.open(b)
				defer s.Close()
				l := openLedger(b, s, "bench", Options{Target: 1e9})
				round := int64(0)
				start := time.Now()
				for done := 0; done < sz.n; round++ {
					if r, err := l.DebitClaiming(ctx, round, subsampled, 1000, digest(round), randomIDs(1000)); err != nil || r != nil {
						b.Fatal(r, err)
					}
					done += 1000
				}
				b.Logf("history of %d ids through %d debits: %v", sz.n, round, time.Since(start).Round(time.Millisecond))
				var before, after syscall.Rusage
				b.ResetTimer()
				syscall.Getrusage(syscall.RUSAGE_SELF, &before)
				for b.Loop() {
					b.StopTimer()
					batch := randomIDs(1000)
					b.StartTimer()
					if r, err := l.DebitClaiming(ctx, round, subsampled, 1000, digest(round), batch); err != nil || r != nil {
						b.Fatal(r, err)
					}
					round++
				}
				syscall.Getrusage(syscall.RUSAGE_SELF, &after)
				b.StopTimer()
				cpu := time.Duration(after.Utime.Nano()-before.Utime.Nano()) + time.Duration(after.Stime.Nano()-before.Stime.Nano())
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
				var stored int64
				if err := s.(*SQLStore).db.QueryRowContext(ctx, `SELECT COALESCE(SUM(length(ids) / 16), 0) FROM report_id_rounds WHERE run = 'bench'`).Scan(&stored); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(stored), "stored-ids")
			})
		}
	}
}

// BenchmarkFencedDebit times a shard replica's debit (the claim of 1,000
// report IDs and the entry, one transaction) with and without the fence
// check (Options.Fence: one UPDATE of the fence's row in the transaction),
// on the durable backends.
func BenchmarkFencedDebit(b *testing.B) {
	ctx := context.Background()
	for _, bk := range backends[1:] {
		for _, fenced := range []bool{false, true} {
			name := bk.name + "/unfenced"
			if fenced {
				name = bk.name + "/fenced"
			}
			b.Run(name, func(b *testing.B) {
				s := bk.open(b)
				defer s.Close()
				opts := Options{Target: 1e9}
				if fenced {
					f, err := s.(Fencer).AdvanceFence(ctx, "bench")
					if err != nil {
						b.Fatal(err)
					}
					opts.Fence = &f
				}
				l := openLedger(b, s, "bench", opts)
				round := int64(0)
				for b.Loop() {
					b.StopTimer()
					batch := randomIDs(1000)
					b.StartTimer()
					if r, err := l.DebitClaiming(ctx, round, subsampled, 1000, digest(round), batch); err != nil || r != nil {
						b.Fatal(r, err)
					}
					round++
				}
			})
		}
	}
}

// BenchmarkStatement is the ledger's per-round cost of its statement for a
// run of rounds of one subsampled-shuffle event (n = 60,000, k = 1,000,
// eps0 = 2, delta = 1e-5): "cheap" is a round between checkpoints (the RDP
// route on memoized curves, the costly routes from the cache), "checkpoint"
// a round whose checkpoint is new (the approximate-DP and PLD routes
// evaluated once: run with -benchtime 1x).
func BenchmarkStatement(b *testing.B) {
	ev := event.Event{Mechanism: event.SubsampledShuffle, N: 60000, K: 1000, Eps0: 2}
	for _, rounds := range []int64{64, 1000, 10557} {
		groups := []event.Composed{{Event: ev, Count: rounds}}
		b.Run(fmt.Sprintf("cheap/rounds=%d", rounds), func(b *testing.B) {
			bk := newBook(RunInfo{Run: "r", Delta: 1e-5, Bound: "best"})
			if _, err := bk.statement(groups, 1e-5, true); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := bk.statement(groups, 1e-5, true); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("checkpoint/rounds=%d", rounds), func(b *testing.B) {
			for b.Loop() {
				bk := newBook(RunInfo{Run: "r", Delta: 1e-5, Bound: "best"})
				if _, err := bk.statement(groups, 1e-5, true); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
