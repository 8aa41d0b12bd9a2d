package training

import (
	"context"
	"math"
	"testing"

	"github.com/shuffledp/shuffledp/accounting"
	"github.com/shuffledp/shuffledp/metrics"
)

// directEpsilon composes the subsampled-shuffle curve rounds times in a
// fresh accounting.Accountant and converts at delta: the accountant used
// directly, independently of the ledger.
func directEpsilon(t *testing.T, n, k int, eps0 float64, rounds int, delta float64) float64 {
	t.Helper()
	curve, err := accounting.Best(int64(n), int64(k), eps0)
	if err != nil {
		t.Fatal(err)
	}
	a, err := accounting.NewAccountant(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Compose(curve, rounds); err != nil {
		t.Fatal(err)
	}
	g, err := a.Epsilon(delta)
	if err != nil {
		t.Fatal(err)
	}
	return g.Epsilon
}

func privateConfig(t *testing.T) Config {
	c := baseConfig(t)
	c.Randomizer, c.Eps0, c.Clip = RandomizerRInf, 2, 0.5
	return c
}

// TestLedgerMatchesAccountant: the epsilon reported at every evaluation of
// a run equals what `account --bound best` gives for that many rounds
// (route.Best: every route; the ledger's RDP route is the RDP accountant's
// up to the rounding of summing one round at a time), and the round-0
// record reports epsilon 0.
func TestLedgerMatchesAccountant(t *testing.T) {
	cfg := privateConfig(t)
	cfg.Epochs, cfg.EvalEvery = 2, 7 // evaluations at rounds 0, 7, 14, 20
	tr, err := New(cfg, newLogReg(t, 10, 4), blobs(cfg.Clients, 10, 4, 1, 1), blobs(100, 10, 4, 1, 2))
	if err != nil {
		t.Fatal(err)
	}
	var recs []metrics.Record
	if _, err := tr.Run(context.Background(), Hooks{OnEval: func(r metrics.Record) error { recs = append(recs, r); return nil }}); err != nil {
		t.Fatal(err)
	}
	wantRounds := []int{0, 7, 14, 20}
	if len(recs) != len(wantRounds) {
		t.Fatalf("%d evaluations, want %d", len(recs), len(wantRounds))
	}
	prev := -1.0
	for i, r := range recs {
		if r.Round != wantRounds[i] || r.Epsilon == nil || r.Delta != cfg.Delta {
			t.Fatalf("record %d: %+v", i, r)
		}
		want := 0.0
		if r.Round > 0 {
			want = bestEpsilon(t, cfg.RoundEvent(), r.Round, cfg.Delta)
			if rdp := directEpsilon(t, cfg.Clients, cfg.Sample, cfg.Eps0, r.Round, cfg.Delta); *r.Epsilon > rdp*(1+1e-12) {
				t.Errorf("round %d: ledger epsilon %.15g above the RDP accountant's %.15g", r.Round, *r.Epsilon, rdp)
			}
		}
		if math.Abs(*r.Epsilon-want) > 1e-12*want {
			t.Errorf("round %d: ledger epsilon %.15g, accountant %.15g", r.Round, *r.Epsilon, want)
		}
		if !(*r.Epsilon > prev) {
			t.Errorf("round %d: epsilon %g not above the previous %g", r.Round, *r.Epsilon, prev)
		}
		prev = *r.Epsilon
	}
}

// TestTargetEpsilonStopsBeforeExceeding sets the target between epsilon
// after 3 and after 4 rounds (computed by the accountant directly): Run
// must complete exactly 3 rounds, report an epsilon within the target, and
// say it stopped for the target.
func TestTargetEpsilonStopsBeforeExceeding(t *testing.T) {
	cfg := privateConfig(t)
	cfg.Epochs = 10
	// The stop decides by best, the PLD route included (the RDP epsilons
	// of directEpsilon would let a fourth round in).
	e3 := bestEpsilon(t, cfg.RoundEvent(), 3, cfg.Delta)
	e4 := bestEpsilon(t, cfg.RoundEvent(), 4, cfg.Delta)
	if !(e3 < e4) {
		t.Fatalf("epsilon not increasing: %g after 3 rounds, %g after 4", e3, e4)
	}
	for _, target := range []float64{e3 * (1 + 1e-9), (e3 + e4) / 2, e4 * (1 - 1e-9)} {
		c := cfg
		c.TargetEpsilon = target
		tr, err := New(c, newLogReg(t, 10, 4), blobs(c.Clients, 10, 4, 1, 1), blobs(100, 10, 4, 1, 2))
		if err != nil {
			t.Fatal(err)
		}
		var recs []metrics.Record
		reason, err := tr.Run(context.Background(), Hooks{OnEval: func(r metrics.Record) error { recs = append(recs, r); return nil }})
		if err != nil {
			t.Fatal(err)
		}
		if reason != StopTargetEpsilon || tr.Round() != 3 || tr.Ledger().Rounds() != 3 {
			t.Fatalf("target %g: stopped (%s) after %d rounds (ledger %d), want target-epsilon after 3",
				target, reason, tr.Round(), tr.Ledger().Rounds())
		}
		last := recs[len(recs)-1]
		if last.Round != 3 || last.Epsilon == nil || *last.Epsilon > target {
			t.Fatalf("target %g: last record %+v, want round 3 with epsilon <= target", target, last)
		}
	}
	// A target below one round's epsilon runs no round at all.
	c := cfg
	c.TargetEpsilon = bestEpsilon(t, cfg.RoundEvent(), 1, cfg.Delta) / 2
	tr, err := New(c, newLogReg(t, 10, 4), blobs(c.Clients, 10, 4, 1, 1), nil)
	if err != nil {
		t.Fatal(err)
	}
	if reason, err := tr.Run(context.Background(), Hooks{}); err != nil || reason != StopTargetEpsilon || tr.Round() != 0 {
		t.Fatalf("tiny target: %s, %v after %d rounds", reason, err, tr.Round())
	}
}

// TestNonPrivateLedger: randomizer none has no ledger and its records
// no epsilon.
func TestNonPrivateLedger(t *testing.T) {
	cfg := baseConfig(t)
	tr, err := New(cfg, newLogReg(t, 10, 4), blobs(cfg.Clients, 10, 4, 1, 1), nil)
	if err != nil {
		t.Fatal(err)
	}
	var last metrics.Record
	if _, err := tr.Run(context.Background(), Hooks{OnEval: func(r metrics.Record) error { last = r; return nil }}); err != nil {
		t.Fatal(err)
	}
	if tr.Ledger() != nil || last.Epsilon != nil || last.Round == 0 {
		t.Fatalf("non-private run: ledger %v, last record round %d epsilon %v", tr.Ledger(), last.Round, last.Epsilon)
	}
}

func cfgValidated(t *testing.T, c Config) Config {
	t.Helper()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	return c
}
