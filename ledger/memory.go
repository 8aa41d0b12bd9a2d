package ledger

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"
)

// MemoryStore is a Store in memory, for tests and simulations that need no
// durability. The zero value is not usable; use NewMemoryStore.
type MemoryStore struct {
	mu      sync.Mutex
	runs    map[string]RunInfo
	entries map[string][]Entry // sorted by round
	// reportIDs maps a run to its claimed report IDs and their rounds.
	reportIDs map[string]map[[16]byte]int64
	// fences holds the epoch of every fence (Fencer).
	fences map[string]int64
	// id is the store's identity (Identifier).
	id     string
	closed bool
}

// NewMemoryStore returns an empty in-memory store.
func NewMemoryStore() *MemoryStore {
	id, err := newLedgerID()
	if err != nil {
		panic(err) // crypto/rand does not fail (Go 1.24+)
	}
	return &MemoryStore{runs: map[string]RunInfo{}, entries: map[string][]Entry{}, reportIDs: map[string]map[[16]byte]int64{}, id: id}
}

var errClosed = errors.New("ledger: store is closed")

// Register implements Store.
func (m *MemoryStore) Register(ctx context.Context, info RunInfo) (RunInfo, error) {
	info, err := info.normalize()
	if err != nil {
		return RunInfo{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return RunInfo{}, errClosed
	}
	if old, ok := m.runs[info.Run]; ok {
		return m.withCount(old), nil
	}
	info.Created = time.Now().Round(0).UTC()
	info.Entries = 0
	m.runs[info.Run] = info
	return info, nil
}

func (m *MemoryStore) withCount(info RunInfo) RunInfo {
	info.Orders = slices.Clone(info.Orders)
	info.Entries = int64(len(m.entries[info.Run]))
	return info
}

// Run implements Store.
func (m *MemoryStore) Run(ctx context.Context, run string) (RunInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return RunInfo{}, errClosed
	}
	info, ok := m.runs[run]
	if !ok {
		return RunInfo{}, fmt.Errorf("%w %q", ErrUnknownRun, run)
	}
	return m.withCount(info), nil
}

// Runs implements Store.
func (m *MemoryStore) Runs(ctx context.Context) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, errClosed
	}
	var out []string
	for r := range m.runs {
		out = append(out, r)
	}
	sort.Strings(out)
	return out, nil
}

// Append implements Store.
func (m *MemoryStore) Append(ctx context.Context, e Entry, seen int64) (bool, error) {
	if err := m.checkAppend(ctx, e); err != nil {
		return false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return false, errClosed
	}
	return m.appendLocked(e, seen)
}

// checkAppend validates e for Append.
func (m *MemoryStore) checkAppend(ctx context.Context, e Entry) error {
	if err := e.Validate(); err != nil {
		return err
	}
	if _, err := EncodeEvent(e.Event); err != nil {
		return err
	}
	return ctx.Err()
}

// appendLocked is Append with m.mu held.
func (m *MemoryStore) appendLocked(e Entry, seen int64) (bool, error) {
	if _, ok := m.runs[e.Run]; !ok {
		return false, fmt.Errorf("append: %w %q (register it first)", ErrUnknownRun, e.Run)
	}
	list := m.entries[e.Run]
	i, found := slices.BinarySearchFunc(list, e.Round, func(x Entry, r int64) int {
		switch {
		case x.Round < r:
			return -1
		case x.Round > r:
			return 1
		}
		return 0
	})
	if found {
		if list[i].same(e) {
			return true, nil
		}
		return false, conflictError(list[i], e)
	}
	if seen >= 0 && seen != int64(len(list)) {
		return false, fmt.Errorf("%w (run %q has %d entries, caller has seen %d)", ErrStale, e.Run, len(list), seen)
	}
	e.Time = e.Time.Round(0).UTC()
	m.entries[e.Run] = slices.Insert(list, i, e)
	return false, nil
}

// AppendClaiming implements ClaimAppender.
func (m *MemoryStore) AppendClaiming(ctx context.Context, e Entry, seen int64, ids [][16]byte) (bool, [][16]byte, error) {
	if err := m.checkAppend(ctx, e); err != nil {
		return false, nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return false, nil, errClosed
	}
	return m.appendClaimingLocked(e, seen, ids)
}

// appendClaimingLocked is AppendClaiming with m.mu held.
func (m *MemoryStore) appendClaimingLocked(e Entry, seen int64, ids [][16]byte) (bool, [][16]byte, error) {
	unique, dup := claimPlan(ids)
	if dup != nil {
		return false, claimReplays(ids, dup, nil), nil
	}
	claimed := m.reportIDs[e.Run]
	var other map[[16]byte]bool
	for _, id := range unique {
		if r, ok := claimed[id]; ok && r != e.Round {
			if other == nil {
				other = map[[16]byte]bool{}
			}
			other[id] = true
		}
	}
	if other != nil {
		return false, claimReplays(ids, nil, other), nil
	}
	existed, err := m.appendLocked(e, seen)
	if err != nil || existed {
		return existed, nil, err
	}
	if claimed == nil {
		claimed = make(map[[16]byte]int64, len(unique))
		m.reportIDs[e.Run] = claimed
	}
	for id, r := range claimed {
		if r < e.Round {
			delete(claimed, id) // pruned, as SQLStore.pruneTx
		}
	}
	for _, id := range unique {
		claimed[id] = e.Round
	}
	return false, nil, nil
}

// conflictError describes how the stored entry differs from the new one.
func conflictError(old, e Entry) error {
	var what string
	switch {
	case old.Digest != e.Digest:
		what = fmt.Sprintf("digest %s, not %s", old.Digest, e.Digest)
	case old.Reports != e.Reports:
		what = fmt.Sprintf("%d reports, not %d", old.Reports, e.Reports)
	default:
		a, _ := EncodeEvent(old.Event)
		b, _ := EncodeEvent(e.Event)
		what = fmt.Sprintf("event %s, not %s", a, b)
	}
	return fmt.Errorf("%w: run %q round %d was debited with %s", ErrConflict, e.Run, e.Round, what)
}

// Entries implements Store.
func (m *MemoryStore) Entries(ctx context.Context, run string) ([]Entry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, errClosed
	}
	return slices.Clone(m.entries[run]), nil
}

// Check implements Store: every entry is valid, in strictly increasing
// round order, and belongs to a registered run.
func (m *MemoryStore) Check(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return errClosed
	}
	for run, list := range m.entries {
		if _, ok := m.runs[run]; !ok {
			return fmt.Errorf("%w: entries of unregistered run %q", ErrCorrupt, run)
		}
		for i, e := range list {
			if err := e.Validate(); err != nil {
				return fmt.Errorf("%w: run %q round %d: %v", ErrCorrupt, run, e.Round, err)
			}
			if i > 0 && e.Round <= list[i-1].Round {
				return fmt.Errorf("%w: run %q: rounds out of order", ErrCorrupt, run)
			}
		}
	}
	return nil
}

// ClaimReportIDs implements ReportIDStore.
func (m *MemoryStore) ClaimReportIDs(ctx context.Context, run string, round int64, ids [][16]byte) ([][16]byte, error) {
	if err := validateClaim(run, round); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, errClosed
	}
	if len(ids) == 0 {
		return nil, nil
	}
	unique, dup := claimPlan(ids)
	claimed := m.reportIDs[run]
	if claimed == nil {
		claimed = make(map[[16]byte]int64, len(unique))
		m.reportIDs[run] = claimed
	}
	var other map[[16]byte]bool
	for _, id := range unique {
		r, ok := claimed[id]
		switch {
		case !ok:
			claimed[id] = round
		case r != round:
			if other == nil {
				other = map[[16]byte]bool{}
			}
			other[id] = true
		}
	}
	return claimReplays(ids, dup, other), nil
}

// Close implements Store.
func (m *MemoryStore) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	return nil
}
