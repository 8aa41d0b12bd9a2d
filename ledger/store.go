package ledger

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/shuffledp/shuffledp/accounting"
)

// Store keeps the entries of a privacy ledger. Implementations are safe for
// concurrent use, and every method that writes does so in one transaction:
// when it returns without error the write is durable (as far as the
// backend guarantees), and when it returns an error nothing was written.
//
// The interface is kept small so that other databases can implement it;
// SQLStore's SQL (a UNIQUE (run, round) key, INSERT ... ON CONFLICT DO
// NOTHING, and a conditional UPDATE of the run's entry count, all in one
// transaction) is the same on SQLite and PostgreSQL, which adds a lock of
// the run's row first.
type Store interface {
	// Register records run with its accounting parameters if the store
	// does not have it yet, and returns the stored RunInfo (the one given,
	// or the one registered before, which the caller must compare).
	Register(ctx context.Context, info RunInfo) (RunInfo, error)
	// Run returns the registered parameters of run, with its entry count;
	// an unknown run is an error wrapping ErrUnknownRun.
	Run(ctx context.Context, run string) (RunInfo, error)
	// Runs lists the registered runs, sorted.
	Runs(ctx context.Context) ([]string, error)
	// Append commits e in one transaction, keyed (e.Run, e.Round), the run
	// being registered. If an entry with that key exists, nothing is
	// written: if it records the same event, report count and digest,
	// Append returns existed = true and no error (a retry never debits
	// twice); otherwise it returns an error wrapping ErrConflict.
	//
	// seen is the number of entries of the run the caller knows of: if the
	// run has another number of entries (another process appended), a new
	// entry is not written and the error wraps ErrStale, so that a caller
	// that priced e against what it has seen never debits on a stale view.
	// seen < 0 skips this check.
	Append(ctx context.Context, e Entry, seen int64) (existed bool, err error)
	// Entries returns the entries of run in round order (none for an
	// unknown run).
	Entries(ctx context.Context, run string) ([]Entry, error)
	// Check verifies the store's integrity: the backend's own check, then
	// that every row decodes to a valid entry and every run's entry count
	// matches its entries. A failure wraps ErrCorrupt.
	Check(ctx context.Context) error
	// Close releases the store.
	Close() error
}

// RunInfo describes a run: the parameters under which its entries are
// converted to (epsilon, delta). A run keeps them for life, so that the
// epsilon reported for its entries never changes meaning.
type RunInfo struct {
	Run string `json:"run"`
	// Delta is the run's delta, in (0, 1).
	Delta float64 `json:"delta"`
	// Bound names the RDP bound composed (route.Curve); Register
	// stores "" as accounting.BoundBest.
	Bound string `json:"bound"`
	// Orders is the RDP order grid; nil means the default grid of
	// route.Epsilon.
	Orders []float64 `json:"orders,omitempty"`
	// Created is when the run was registered (UTC); set by the store.
	Created time.Time `json:"created"`
	// Entries is the number of entries of the run (set by Run).
	Entries int64 `json:"entries"`
}

// normalize returns info with the default bound spelled out and a sorted
// copy of the orders, or an error naming the first invalid parameter.
func (info RunInfo) normalize() (RunInfo, error) {
	if err := ValidateRun(info.Run); err != nil {
		return info, err
	}
	if !(info.Delta > 0 && info.Delta < 1) {
		return info, fmt.Errorf("delta must be in (0,1), got %g", info.Delta)
	}
	if info.Bound == "" {
		info.Bound = accounting.BoundBest
	}
	if len(info.Orders) == 0 {
		info.Orders = nil
	} else {
		info.Orders = slices.Clone(info.Orders)
		slices.Sort(info.Orders)
		for i, o := range info.Orders {
			if math.IsNaN(o) || math.IsInf(o, 0) || o <= 1 {
				return info, fmt.Errorf("orders: %g is not a finite number > 1", o)
			}
			if i > 0 && o == info.Orders[i-1] {
				return info, fmt.Errorf("orders: %g appears twice", o)
			}
		}
	}
	return info, nil
}

// sameParams reports the first accounting parameter in which a and b
// differ ("" if none).
func sameParams(a, b RunInfo) string {
	switch {
	case a.Delta != b.Delta:
		return "delta"
	case a.Bound != b.Bound:
		return "bound"
	case !slices.Equal(a.Orders, b.Orders):
		return "orders"
	}
	return ""
}

// checkRuns is the part of Check common to the backends: every run's
// parameters are valid, every entry decodes to a valid entry (the
// backend's Entries fails with ErrCorrupt otherwise), and every run's
// entry count equals its number of entries.
func checkRuns(ctx context.Context, s Store) error {
	runs, err := s.Runs(ctx)
	if err != nil {
		return err
	}
	for _, run := range runs {
		info, err := s.Run(ctx, run)
		if err != nil {
			return err
		}
		if _, err := info.normalize(); err != nil {
			return fmt.Errorf("%w: run %q: %v", ErrCorrupt, run, err)
		}
		entries, err := s.Entries(ctx, run)
		if err != nil {
			return err
		}
		if int64(len(entries)) != info.Entries {
			return fmt.Errorf("%w: run %q counts %d entries but has %d", ErrCorrupt, run, info.Entries, len(entries))
		}
	}
	return nil
}
