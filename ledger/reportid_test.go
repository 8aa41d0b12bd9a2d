package ledger

import (
	"context"
	"crypto/rand"
	"fmt"
	mrand "math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func rid(b byte) [16]byte { return [16]byte{15: b} }

func ids(bs ...byte) [][16]byte {
	out := make([][16]byte, len(bs))
	for i, b := range bs {
		out[i] = rid(b)
	}
	return out
}

func randomIDs(n int) [][16]byte {
	out := make([][16]byte, n)
	for i := range out {
		rand.Read(out[i][:])
	}
	return out
}

func TestClaimReportIDs(t *testing.T) {
	ctx := context.Background()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			s := b.open(t).(Backend)
			defer s.Close()
			for _, step := range []struct {
				name  string
				run   string
				round int64
				ids   [][16]byte
				want  [][16]byte
			}{
				{"first claim", "r", 1, ids(1, 2, 3), nil},
				{"empty", "r", 1, nil, nil},
				{"re-claim, same round", "r", 1, ids(3, 1, 2), nil},
				{"subset, same round", "r", 1, ids(2), nil},
				{"replays into the next round", "r", 2, ids(4, 1, 5, 3), ids(1, 3)},
				{"the new ones were claimed", "r", 2, ids(4, 5), nil},
				{"replays stay under their first round", "r", 1, ids(1, 2, 3, 4), ids(4)},
				{"duplicates within one call", "r", 3, ids(6, 7, 6, 6, 8), ids(6, 6)},
				{"a duplicated replay, every occurrence", "r", 3, ids(1, 1), ids(1, 1)},
				{"re-claim with the duplicate", "r", 3, ids(6, 7, 6, 6, 8), ids(6, 6)},
				{"another run", "other", 9, ids(1, 2, 3, 4, 5, 6, 7, 8), nil},
				{"round 0", "zero", 0, ids(1), nil},
			} {
				got, err := s.ClaimReportIDs(ctx, step.run, step.round, step.ids)
				if err != nil {
					t.Fatalf("%s: %v", step.name, err)
				}
				if !slices.Equal(got, step.want) {
					t.Fatalf("%s: replays %v, want %v", step.name, got, step.want)
				}
			}
			for _, bad := range []struct {
				run   string
				round int64
				want  string
			}{
				{"", 1, "run"}, {"a\x00b", 1, "control"}, {strings.Repeat("x", MaxRunLength+1), 1, "run"}, {"r", -1, "round"},
			} {
				if _, err := s.ClaimReportIDs(ctx, bad.run, bad.round, ids(99)); err == nil || !strings.Contains(err.Error(), bad.want) {
					t.Errorf("ClaimReportIDs(%q, %d): error %v, want one naming %s", bad.run, bad.round, err, bad.want)
				}
			}
			// The refused claims recorded nothing: 99 is new to r.
			if got, err := s.ClaimReportIDs(ctx, "r", 4, ids(99)); err != nil || got != nil {
				t.Errorf("after refused claims: %v, %v", got, err)
			}
			if err := s.Check(ctx); err != nil {
				t.Errorf("Check: %v", err)
			}
		})
	}
}

// Random claims over a small id space agree with a plain model of the
// semantics (a map from id to its first round) on every backend.
func TestClaimReportIDsModel(t *testing.T) {
	ctx := context.Background()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			s := b.open(t).(Backend)
			defer s.Close()
			rng := mrand.New(mrand.NewPCG(5, 6)) // test data only
			model := map[string]map[[16]byte]int64{"a": {}, "b": {}}
			for call := range 60 {
				run := []string{"a", "b"}[rng.IntN(2)]
				round := int64(rng.IntN(6))
				batch := make([][16]byte, rng.IntN(40))
				for i := range batch {
					batch[i] = rid(byte(rng.IntN(120)))
				}
				var want [][16]byte
				seen := map[[16]byte]bool{}
				for _, id := range batch {
					r, ok := model[run][id]
					if seen[id] || ok && r != round {
						want = append(want, id)
					} else if !ok {
						model[run][id] = round
					}
					seen[id] = true
				}
				got, err := s.ClaimReportIDs(ctx, run, round, batch)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, want) {
					t.Fatalf("call %d (run %s round %d, %v): replays %v, want %v", call, run, round, batch, got, want)
				}
			}
		})
	}
}

// Shufflers racing to claim the same ids for different rounds: every id
// ends up claimed by exactly one of them, the others see it as a replay.
func TestClaimReportIDsRace(t *testing.T) {
	ctx := context.Background()
	for _, b := range sharedBackends {
		t.Run(b.name, func(t *testing.T) {
			target := b.target(t)
			const claimers = 3
			batch := randomIDs(2000)
			replays := make([][][16]byte, claimers)
			var wg sync.WaitGroup
			errs := make(chan error, claimers)
			for i := range claimers {
				s := b.open(t, target)
				defer s.Close()
				// Each claims the batch in another order, in chunks.
				order := slices.Clone(batch)
				mrand.New(mrand.NewPCG(uint64(i), 7)).Shuffle(len(order), func(a, b int) { order[a], order[b] = order[b], order[a] })
				wg.Add(1)
				go func() {
					defer wg.Done()
					for c := 0; c < len(order); c += 250 {
						r, err := s.ClaimReportIDs(ctx, "race", int64(i), order[c:c+250])
						if err != nil {
							errs <- err
							return
						}
						replays[i] = append(replays[i], r...)
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			count := map[[16]byte]int{}
			total := 0
			for _, r := range replays {
				total += len(r)
				for _, id := range r {
					count[id]++
				}
			}
			if total != (claimers-1)*len(batch) {
				t.Fatalf("%d replays, want %d: each id claimed by exactly one shuffler", total, (claimers-1)*len(batch))
			}
			for _, id := range batch {
				if count[id] != claimers-1 {
					t.Fatalf("id %x refused %d times, want %d", id, count[id], claimers-1)
				}
			}
		})
	}
}

// A claim reads the run's stored rounds and then writes its own round's
// row, so two claims of one run must not interleave: here a second store
// claims the same ids for round 1 while a first store's claim of round 0
// is inside its transaction, not committed. The second claim waits (the
// claim lock in PostgreSQL, the write lock in SQLite) and then finds every
// id claimed under round 0: all replays. Without the lock it would read
// before the first commit and record the ids under round 1 as well.
func TestClaimWaitsForAClaimInFlight(t *testing.T) {
	ctx := context.Background()
	for _, b := range sharedBackends {
		t.Run(b.name, func(t *testing.T) {
			target := b.target(t)
			s1 := b.open(t, target).(*SQLStore)
			defer s1.Close()
			s2 := b.open(t, target).(*SQLStore)
			defer s2.Close()
			batch := randomIDs(100)
			tx, err := s1.db.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			if other, err := s1.claimTx(ctx, tx, "inflight", 0, batch); err != nil || other != nil {
				t.Fatal(other, err)
			}
			second := make(chan [][16]byte, 1)
			errs := make(chan error, 1)
			go func() {
				r, err := s2.ClaimReportIDs(ctx, "inflight", 1, batch)
				errs <- err
				second <- r
			}()
			select {
			case err := <-errs:
				t.Fatalf("the second claim returned (%v) while the first was in flight", err)
			case <-time.After(300 * time.Millisecond):
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
			if r := <-second; len(r) != len(batch) {
				t.Fatalf("second claim: %d replays, want all %d (claimed by the first)", len(r), len(batch))
			}
			if got := storedIDs(t, s1, "inflight"); len(got) != 1 || got[0] != len(batch) {
				t.Errorf("stored ids by round %v, want round 0's %d", got, len(batch))
			}
		})
	}
}

// BenchmarkClaimReportIDs measures one claim of 10,000 fresh random ids (a
// NeurIPS'21 Fig. 3 round at k = 10,000) into a store that already holds
// the previous claims, and one re-claim of the same ids (the idempotent
// path a restarted shuffler takes).
func BenchmarkClaimReportIDs(b *testing.B) {
	ctx := context.Background()
	for _, bk := range backends {
		for _, reclaim := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/reclaim=%v", bk.name, reclaim), func(b *testing.B) {
				s := bk.open(b).(Backend)
				defer s.Close()
				round := int64(0)
				batch := randomIDs(10000)
				if reclaim {
					if _, err := s.ClaimReportIDs(ctx, "bench", 0, batch); err != nil {
						b.Fatal(err)
					}
				}
				for b.Loop() {
					if !reclaim {
						b.StopTimer()
						batch = randomIDs(10000)
						round++
						b.StartTimer()
					}
					r, err := s.ClaimReportIDs(ctx, "bench", round, batch)
					if err != nil || r != nil {
						b.Fatal(r, err)
					}
				}
			})
		}
	}
}
