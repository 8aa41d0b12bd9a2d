package ledger

import (
	"context"
	"path/filepath"
	"testing"
)

// BenchmarkDebit measures one Debit: pricing the event against the run's
// composition (target set, so the guarantee is computed) and committing it.
// For SQLite that is one transaction fsynced to the WAL (synchronous=FULL).
func BenchmarkDebit(b *testing.B) {
	for _, bk := range []struct {
		name string
		open func(b *testing.B) Store
	}{
		{"memory", func(b *testing.B) Store { return NewMemoryStore() }},
		{"sqlite", func(b *testing.B) Store {
			s, err := OpenSQLite(context.Background(), filepath.Join(b.TempDir(), FileName), SQLiteOptions{})
			if err != nil {
				b.Fatal(err)
			}
			return s
		}},
	} {
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
