package ledger

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/shuffledp/shuffledp/accounting"
	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/route"
)

const delta = 1e-5

func digest(round int64) Digest { return sha256.Sum256([]byte(fmt.Sprintf("batch %d", round))) }

func openLedger(t testing.TB, s Store, run string, opts Options) *Ledger {
	t.Helper()
	if opts.Delta == 0 {
		opts.Delta = delta
	}
	l, err := Open(context.Background(), s, run, opts)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func debit(t testing.TB, l *Ledger, round int64, ev event.Event) {
	t.Helper()
	if err := l.Debit(context.Background(), round, ev, int(max(ev.K, 1)), digest(round)); err != nil {
		t.Fatalf("Debit(%d): %v", round, err)
	}
}

// accountEpsilon is what `shuffledp account --bound best` computes for
// steps rounds of one mechanism (route.Best): the ledger's epsilon, bit for
// bit, for up to 64 rounds (every count up to 64 is a checkpoint).
func accountEpsilon(t *testing.T, ev event.Event, steps int64) accounting.Guarantee {
	t.Helper()
	g, err := route.Best([]event.Composed{{Event: ev, Count: steps}}, delta, nil)
	if err != nil {
		t.Fatal(err)
	}
	return g.Guarantee
}

// The ledger's epsilon is route.Best's for the same composition, bit for
// bit (up to 64 rounds), and for one mechanism it is the accountant's for
// --steps rounds; its RDP route is the RDP accountant's.
func TestEpsilonMatchesAccount(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		ev     event.Event
		rounds int64
	}{
		{subsampled, 1},
		{subsampled, 60},
		{event.Event{Mechanism: "shuffle", N: 1000, Eps0: 1}, 25},
		{event.Event{Mechanism: "subsampled-shuffle", N: 1000, K: 10, Eps0: 0.5}, 40},
	} {
		t.Run(fmt.Sprintf("%s/n=%d/k=%d/eps0=%g/rounds=%d", tc.ev.Mechanism, tc.ev.N, tc.ev.K, tc.ev.Eps0, tc.rounds), func(t *testing.T) {
			l := openLedger(t, NewMemoryStore(), "r", Options{})
			for r := range tc.rounds {
				debit(t, l, r, tc.ev)
			}
			got, err := l.Epsilon()
			if err != nil {
				t.Fatal(err)
			}
			want := accountEpsilon(t, tc.ev, tc.rounds)
			if got != want {
				t.Errorf("ledger %+v, route.Epsilon %+v", got, want)
			}
			// The accountant directly, as cmd/shuffledp account composes.
			curve, err := accounting.NewBound(tc.ev.Mechanism, accounting.BoundBest, tc.ev.N, max(tc.ev.K, tc.ev.N*btoi(tc.ev.Mechanism == "shuffle")), tc.ev.Eps0)
			if err != nil {
				t.Fatal(err)
			}
			acct, _ := accounting.NewAccountant(nil)
			if err := acct.Compose64(curve, tc.rounds); err != nil {
				t.Fatal(err)
			}
			direct, err := acct.Epsilon(delta)
			if err != nil {
				t.Fatal(err)
			}
			rdp, err := l.book.result(l.Events(), delta, false)
			if err != nil {
				t.Fatal(err)
			}
			if rdp.Epsilon != direct.Epsilon || rdp.Order != direct.Order {
				t.Errorf("ledger's RDP route %v at order %v, accountant %v at %v", rdp.Epsilon, rdp.Order, direct.Epsilon, direct.Order)
			}
			s, err := Summarize(ctx, l.store, "r", 0, false)
			if err != nil {
				t.Fatal(err)
			}
			if s.Epsilon != got.Epsilon || s.Rounds != tc.rounds || len(s.Events) != 1 || s.Events[0].Count != tc.rounds {
				t.Errorf("summary %+v disagrees with the ledger (%+v after %d rounds)", s, got, tc.rounds)
			}
		})
	}
}

func btoi(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// Rounds of different mechanisms compose; epsilon never decreases from one
// entry to the next, and a reopened ledger reports the same epsilon.
func TestEpsilonNonDecreasing(t *testing.T) {
	events := []event.Event{
		subsampled,
		{Mechanism: "subsampled-shuffle", N: 60000, K: 2000, Eps0: 1.5},
		{Mechanism: "subsampled-shuffle", N: 60000, K: 1000, Eps0: 4},
	}
	store := NewMemoryStore()
	l := openLedger(t, store, "mixed", Options{})
	prev := 0.0
	for r := range int64(30) {
		ev := events[(r*r)%int64(len(events))]
		next, err := l.NextEpsilon(ev)
		if err != nil {
			t.Fatal(err)
		}
		debit(t, l, 3*r, ev) // rounds need not be contiguous
		g, err := l.Epsilon()
		if err != nil {
			t.Fatal(err)
		}
		if g != next {
			t.Fatalf("round %d: NextEpsilon said %+v, Epsilon after the debit is %+v", r, next, g)
		}
		if !(g.Epsilon >= prev) {
			t.Fatalf("round %d: epsilon %v < previous %v", r, g.Epsilon, prev)
		}
		prev = g.Epsilon
	}
	want, err := route.Best(l.Events(), delta, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := l.Epsilon()
	if got != want.Guarantee {
		t.Errorf("ledger %+v, route.Best of its composition %+v", got, want.Guarantee)
	}
	again := openLedger(t, store, "mixed", Options{})
	if g, _ := again.Epsilon(); g != got || again.Rounds() != 30 {
		t.Errorf("reopened: %d rounds, %+v; want 30, %+v", again.Rounds(), g, got)
	}
}

func TestDebitIdempotentAndConflicting(t *testing.T) {
	ctx := context.Background()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			s := b.open(t)
			defer s.Close()
			l := openLedger(t, s, "r", Options{})
			debit(t, l, 0, subsampled)
			debit(t, l, 1, subsampled)
			before, _ := l.Epsilon()
			debit(t, l, 0, subsampled) // a retry of an old round
			debit(t, l, 1, subsampled) // and of the last
			other := subsampled
			other.K = 999
			for _, bad := range []struct {
				name    string
				ev      event.Event
				reports int
				d       Digest
			}{
				{"digest", subsampled, 1000, digest(7)},
				{"event", other, 1000, digest(1)},
				{"reports", subsampled, 999, digest(1)},
			} {
				if err := l.Debit(ctx, 1, bad.ev, bad.reports, bad.d); !errors.Is(err, ErrConflict) {
					t.Errorf("other %s for round 1: error %v, want ErrConflict", bad.name, err)
				}
			}
			if err := l.Debit(ctx, 0, subsampled, 1000, digest(5)); !errors.Is(err, ErrConflict) {
				t.Errorf("other digest for round 0: error %v, want ErrConflict", err)
			}
			after, _ := l.Epsilon()
			entries, _ := s.Entries(ctx, "r")
			if l.Rounds() != 2 || len(entries) != 2 || after != before {
				t.Errorf("after retries and conflicts: %d rounds, %d stored, epsilon %v (was %v); want 2, 2, unchanged",
					l.Rounds(), len(entries), after.Epsilon, before.Epsilon)
			}
		})
	}
}

func TestDebitRejects(t *testing.T) {
	ctx := context.Background()
	l := openLedger(t, NewMemoryStore(), "r", Options{})
	debit(t, l, 5, subsampled)
	bad := subsampled
	bad.K = bad.N + 1
	for _, tc := range []struct {
		name    string
		round   int64
		ev      event.Event
		reports int
		want    string
	}{
		{"round below the last", 4, subsampled, 1000, "not above the last debited round 5"},
		{"negative round", -1, subsampled, 1000, "round"},
		{"no reports", 6, subsampled, 0, "reports"},
		{"invalid event", 6, bad, 1000, "k"},
	} {
		if err := l.Debit(ctx, tc.round, tc.ev, tc.reports, digest(tc.round)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	if l.Rounds() != 1 {
		t.Errorf("%d rounds after refused debits, want 1", l.Rounds())
	}
	lower := openLedger(t, NewMemoryStore(), "r", Options{Bound: accounting.BoundNeurIPS21Lower})
	if err := lower.Debit(ctx, 0, subsampled, 1000, digest(0)); err == nil || !strings.Contains(err.Error(), "lower bound") {
		t.Errorf("a ledger on a lower bound debited: %v", err)
	}
}

// A debit that would take epsilon past the target writes nothing; the
// target is inclusive.
func TestTarget(t *testing.T) {
	ctx := context.Background()
	at3 := accountEpsilon(t, subsampled, 3).Epsilon
	for _, tc := range []struct {
		name   string
		target float64
		rounds int64
	}{
		{"exactly at 3 rounds", at3, 3},
		{"just below 3 rounds", math.Nextafter(at3, 0), 2},
		{"none", 0, 6},
	} {
		for _, b := range backends {
			t.Run(tc.name+"/"+b.name, func(t *testing.T) {
				s := b.open(t)
				defer s.Close()
				l := openLedger(t, s, "r", Options{Target: tc.target})
				var r int64
				var err error
				for r = 0; r < 6; r++ {
					check := l.CheckNext(subsampled)
					if (check == nil) != (r < tc.rounds) || check != nil && !errors.Is(check, ErrBudgetExhausted) {
						t.Errorf("CheckNext before round %d: %v", r, check)
					}
					if err = l.Debit(ctx, r, subsampled, 1000, digest(r)); err != nil {
						break
					}
				}
				if r != tc.rounds {
					t.Fatalf("debited %d rounds (stopped by %v), want %d", r, err, tc.rounds)
				}
				if tc.rounds < 6 && !errors.Is(err, ErrBudgetExhausted) {
					t.Fatalf("refusal error %v, want ErrBudgetExhausted", err)
				}
				entries, _ := s.Entries(ctx, "r")
				if int64(len(entries)) != tc.rounds || l.Rounds() != tc.rounds {
					t.Errorf("%d entries stored, ledger says %d; want %d", len(entries), l.Rounds(), tc.rounds)
				}
				if g, _ := l.Epsilon(); tc.target > 0 && g.Epsilon > tc.target {
					t.Errorf("epsilon %v above target %v", g.Epsilon, tc.target)
				}
				// A retry of a debited round is still answered.
				if err := l.Debit(ctx, 0, subsampled, 1000, digest(0)); err != nil {
					t.Errorf("retry of round 0 after the refusal: %v", err)
				}
			})
		}
	}
}

// A process that restarts continues from the ledger, not from zero.
func TestRestartContinues(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), FileName)
	open := func() (*SQLStore, *Ledger) {
		s, err := OpenSQLite(ctx, path, SQLiteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return s, openLedger(t, s, "run-1", Options{})
	}
	s, l := open()
	for r := range int64(5) {
		debit(t, l, r, subsampled)
	}
	before, _ := l.Epsilon()
	s.Close()

	s, l = open()
	defer s.Close()
	if g, _ := l.Epsilon(); l.Rounds() != 5 || l.LastRound() != 4 || g != before {
		t.Fatalf("reopened: %d rounds, last %d, %+v; want 5, 4, %+v", l.Rounds(), l.LastRound(), g, before)
	}
	debit(t, l, 2, subsampled) // a retry from before the restart
	debit(t, l, 5, subsampled)
	if g, _ := l.Epsilon(); l.Rounds() != 6 || g != accountEpsilon(t, subsampled, 6) {
		t.Errorf("after one more round: %d rounds, %+v; want 6, %+v", l.Rounds(), g, accountEpsilon(t, subsampled, 6))
	}
	if _, err := Open(ctx, s, "run-1", Options{Delta: 1e-6}); !errors.Is(err, ErrRunMismatch) || !strings.Contains(err.Error(), "delta") {
		t.Errorf("reopening with another delta: %v, want ErrRunMismatch naming delta", err)
	}
	if _, err := Open(ctx, s, "run-1", Options{Delta: delta, Bound: "pure-dp"}); !errors.Is(err, ErrRunMismatch) || !strings.Contains(err.Error(), "bound") {
		t.Errorf("reopening with another bound: %v, want ErrRunMismatch naming bound", err)
	}
}

// Two ledgers on one store (two processes on one file or database) never
// debit on a stale view: the second prices again with the first's entries.
func TestTwoWriters(t *testing.T) {
	ctx := context.Background()
	budget := accountEpsilon(t, subsampled, 2).Epsilon
	for _, b := range sharedBackends {
		t.Run(b.name, func(t *testing.T) {
			target := b.target(t)
			var ls [2]*Ledger
			for i := range ls {
				s := b.open(t, target)
				defer s.Close()
				ls[i] = openLedger(t, s, "r", Options{Target: budget})
			}
			debit(t, ls[0], 0, subsampled)
			debit(t, ls[1], 1, subsampled) // stale (has not seen round 0): reloads, then fits
			if ls[1].Rounds() != 2 {
				t.Fatalf("second writer sees %d rounds, want 2", ls[1].Rounds())
			}
			debit(t, ls[0], 1, subsampled) // the same entry: idempotent after a reload
			if err := ls[0].Debit(ctx, 2, subsampled, 1000, digest(2)); !errors.Is(err, ErrBudgetExhausted) {
				t.Errorf("third round past the target: %v, want ErrBudgetExhausted", err)
			}
			if err := ls[1].Debit(ctx, 1, subsampled, 1000, digest(9)); !errors.Is(err, ErrConflict) {
				t.Errorf("another batch for round 1: %v, want ErrConflict", err)
			}
		})
	}
}

// Concurrent debits of the same rounds from many goroutines and two
// connections (pools) write every round once.
func TestConcurrentDebits(t *testing.T) {
	ctx := context.Background()
	for _, b := range sharedBackends {
		t.Run(b.name, func(t *testing.T) {
			target := b.target(t)
			var ls [2]*Ledger
			var stores [2]Backend
			for i := range ls {
				s := b.open(t, target)
				defer s.Close()
				stores[i], ls[i] = s, openLedger(t, s, "r", Options{Target: 1e9})
			}
			const rounds = 20
			var wg sync.WaitGroup
			errs := make(chan error, 8*rounds)
			for g := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					l := ls[g%2]
					for r := range int64(rounds) {
						if err := l.Debit(ctx, r, subsampled, 1000, digest(r)); err != nil {
							errs <- fmt.Errorf("goroutine %d round %d: %w", g, r, err)
						}
						_, _ = l.Epsilon()
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			entries, err := stores[0].Entries(ctx, "r")
			if err != nil || len(entries) != rounds {
				t.Fatalf("%d entries stored (%v), want %d", len(entries), err, rounds)
			}
			if err := stores[1].Check(ctx); err != nil {
				t.Error(err)
			}
		})
	}
}

// Two shufflers (two Ledgers, each on its own connection pool) race to
// debit the same rounds, each with its own batch, until past the budget:
// every round is won by exactly one of them (the other gets ErrConflict),
// the rounds that fit the target are all debited and no other, and the
// stored epsilon never exceeds the target.
func TestRacingShufflers(t *testing.T) {
	ctx := context.Background()
	const fit = 12 // rounds within the target
	budget := accountEpsilon(t, subsampled, fit).Epsilon
	for _, b := range sharedBackends {
		t.Run(b.name, func(t *testing.T) {
			for trial := range 3 {
				target := b.target(t)
				run := fmt.Sprintf("race-%d", trial)
				var ls [2]*Ledger
				for i := range ls {
					s := b.open(t, target)
					defer s.Close()
					ls[i] = openLedger(t, s, run, Options{Target: budget})
				}
				const rounds = fit + 4
				var results [2][rounds]error
				// Both reach each round before either debits it.
				var barrier [rounds]sync.WaitGroup
				for r := range barrier {
					barrier[r].Add(len(ls))
				}
				var wg sync.WaitGroup
				for i, l := range ls {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for r := range int64(rounds) {
							barrier[r].Done()
							barrier[r].Wait()
							batch := sha256.Sum256([]byte(fmt.Sprintf("shuffler %d round %d", i, r)))
							results[i][r] = l.Debit(ctx, r, subsampled, 1000, batch)
						}
					}()
				}
				wg.Wait()
				wins := 0
				for r := range rounds {
					a, b := results[0][r], results[1][r]
					switch {
					case r < fit && (a == nil) == (b == nil):
						t.Fatalf("trial %d round %d: errors %v and %v, want exactly one winner", trial, r, a, b)
					case r < fit && !errors.Is(a, ErrConflict) && !errors.Is(b, ErrConflict):
						t.Fatalf("trial %d round %d: the loser's error is %v / %v, want ErrConflict", trial, r, a, b)
					case r >= fit && (!errors.Is(a, ErrBudgetExhausted) || !errors.Is(b, ErrBudgetExhausted)):
						t.Fatalf("trial %d round %d past the target: errors %v and %v, want ErrBudgetExhausted", trial, r, a, b)
					}
					if a == nil {
						wins++
					}
				}
				check := b.open(t, target)
				defer check.Close()
				entries, err := check.Entries(ctx, run)
				if err != nil || len(entries) != fit {
					t.Fatalf("trial %d: %d entries (%v), want %d", trial, len(entries), err, fit)
				}
				for _, e := range entries {
					winner := 0
					if results[0][e.Round] != nil {
						winner = 1
					}
					if e.Digest != sha256.Sum256([]byte(fmt.Sprintf("shuffler %d round %d", winner, e.Round))) {
						t.Fatalf("trial %d round %d: the stored batch is not the winner's", trial, e.Round)
					}
				}
				s, err := Summarize(ctx, check, run, 0, false)
				if err != nil || s.Epsilon > budget {
					t.Fatalf("trial %d: stored epsilon %v (%v) above the target %v", trial, s.Epsilon, err, budget)
				}
				t.Logf("trial %d: shuffler 0 won %d rounds, shuffler 1 %d", trial, wins, fit-wins)
			}
		})
	}
}

// The ledger's accounting (route.AccountCurves over memoized curves) is
// route.Account's bit for bit, for every mechanism, on adaptive grids that
// widen, and for mixed compositions: the winner (forwarded through the
// memo) and the Gaussian assumption included.
func TestAccountMatchesEvent(t *testing.T) {
	ssg := event.Event{Mechanism: event.SubsampledShuffleGaussian, N: 1000, K: 100, Sigma: 5}
	sg := event.Event{Mechanism: event.ShuffleGaussian, N: 1000, Sigma: 5}
	checkin := event.Event{Mechanism: event.CheckinGaussian, N: 1000, Rate: 0.1, Sigma: 5}
	small := event.Event{Mechanism: event.SubsampledShuffle, N: 1000, K: 10, Eps0: 0.5}
	for _, tc := range []struct {
		name   string
		rounds []event.Event // one per round
		bound  string
	}{
		{"subsampled-shuffle", repeat(subsampled, 12), ""},
		{"subsampled-shuffle, neurips21-upper", repeat(subsampled, 12), accounting.BoundNeurIPS21Upper},
		{"shuffle-gaussian", repeat(sg, 5), ""},
		{"subsampled-shuffle-gaussian, widened", repeat(ssg, 3), ""},
		{"subsampled-shuffle-gaussian, gaussian-cor1", repeat(ssg, 3), route.BoundGaussianCor1},
		{"checkin-gaussian", repeat(checkin, 10), ""},
		{"mixed LDP", append(repeat(subsampled, 4), append(repeat(small, 3), subsampled)...), ""},
		{"LDP and Gaussian", append(repeat(sg, 2), repeat(small, 3)...), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := openLedger(t, NewMemoryStore(), "r", Options{Bound: tc.bound, Target: 1e9})
			for r, ev := range tc.rounds {
				debit(t, l, int64(r), ev)
			}
			want, err := route.Account(l.Events(), tc.bound, delta, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tc.bound == "" && want.Winner == "" {
				t.Fatal("route.Account names no winner of best: nothing to compare")
			}
			got, err := l.book.result(l.Events(), delta, true)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("ledger %+v\nevent  %+v", got, want)
			}
			s, err := l.Summary(false)
			if err != nil {
				t.Fatal(err)
			}
			if tc.bound == "" { // the summary states best: every route
				b, err := route.Best(l.Events(), delta, nil)
				if err != nil {
					t.Fatal(err)
				}
				want = b.Result
			}
			if s.Epsilon != want.Epsilon || s.Order != want.Order || s.Winner != want.Winner || s.Assumption != want.Assumption {
				t.Errorf("summary %+v, event %+v", s, want)
			}
		})
	}
}

func repeat(ev event.Event, n int) []event.Event {
	out := make([]event.Event, n)
	for i := range out {
		out[i] = ev
	}
	return out
}

// shuffle with k = n and with k omitted is one event: a retry in the other
// form is idempotent, not a conflict.
func TestCanonicalEvent(t *testing.T) {
	ctx := context.Background()
	l := openLedger(t, NewMemoryStore(), "r", Options{})
	withK := event.Event{Mechanism: event.Shuffle, N: 100, K: 100, Eps0: 1}
	withoutK := withK
	withoutK.K = 0
	if err := l.Debit(ctx, 0, withK, 100, digest(0)); err != nil {
		t.Fatal(err)
	}
	if err := l.Debit(ctx, 0, withoutK, 100, digest(0)); err != nil {
		t.Errorf("retry with k omitted: %v", err)
	}
	if ev := l.Entries()[0].Event; ev != withoutK {
		t.Errorf("stored %+v, want %+v", ev, withoutK)
	}
}
