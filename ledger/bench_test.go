package ledger

import (
	"context"
	"testing"
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
