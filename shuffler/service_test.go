package shuffler

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/shuffledp/shuffledp/protocol"
	"github.com/shuffledp/shuffledp/randomizer"
	"gonum.org/v1/gonum/stat/distuv"
)

// fakeBudget records every call into a shared log and fails on demand.
type fakeBudget struct {
	log      *[]string
	releases []Release
	debitErr error
	checkErr error
}

func (b *fakeBudget) Debit(_ context.Context, r Release) error {
	*b.log = append(*b.log, fmt.Sprintf("debit %d", r.Round))
	if b.debitErr != nil {
		return b.debitErr
	}
	b.releases = append(b.releases, r)
	return nil
}

func (b *fakeBudget) Check(_ context.Context, r Release) error {
	*b.log = append(*b.log, fmt.Sprintf("check %d", r.Round))
	return b.checkErr
}

// countingRandomness is seeded randomness that counts its rounds.
type countingRandomness struct {
	inner Randomness
	calls int
}

func (c *countingRandomness) Round(sample []int) (randomizer.Source, error) {
	c.calls++
	return c.inner.Round(sample)
}

type seededRandomness struct {
	s   *Sampler
	rng *rand.Rand
	src randomizer.Source
}

func newSeeded(t testing.TB, n, k int, seed uint64) *seededRandomness {
	s, err := NewSampler(n, k)
	if err != nil {
		t.Fatal(err)
	}
	return &seededRandomness{s: s, rng: rand.New(rand.NewPCG(seed, 1)), src: randomizer.NewSeededSource(seed + 1)}
}

func (r *seededRandomness) Round(sample []int) (randomizer.Source, error) {
	r.s.Sample(r.rng, sample)
	return r.src, nil
}

func runCfg(n, k, minBatch, size int) protocol.RunConfig {
	return protocol.RunConfig{Run: "run", Model: "logreg", Dim: 4, Randomizer: "rinf", ClipNorm: protocol.NormLInf,
		Clip: 1, Eps0: 1, Population: n, PerRound: k, MinBatch: minBatch, ReportBytes: size}
}

type fixture struct {
	svc    *Service
	budget *fakeBudget
	rnd    *countingRandomness
	log    []string
}

func newFixture(t testing.TB, cfg ServiceConfig) *fixture {
	t.Helper()
	f := &fixture{}
	f.budget = &fakeBudget{log: &f.log}
	if cfg.Budget == nil {
		cfg.Budget = f.budget
	}
	if cfg.Run.Run == "" {
		cfg.Run = runCfg(10, 4, 4, 2)
	}
	f.rnd = &countingRandomness{inner: newSeeded(t, cfg.Run.Population, cfg.Run.PerRound, 5)}
	cfg.Randomness = f.rnd
	svc, err := NewService(cfg)
	if err != nil {
		t.Fatal(err)
	}
	f.svc = svc
	return f
}

var model0 = protocol.Model{Run: "run", Version: 0, Params: []float64{1, 2, 3, 4}}

// report is the 2-byte report client c sends.
func report(c int) []byte { return []byte{byte(c), byte(c >> 8)} }

// submitAll submits one report from every sampled client but skip.
func (f *fixture) submitAll(t testing.TB, id int64, skip int) {
	t.Helper()
	for _, c := range f.svc.Sampled() {
		if c == skip {
			continue
		}
		if err := f.svc.Submit(c, id, report(c)); err != nil {
			t.Fatal(err)
		}
	}
}

func (f *fixture) forward(got *[]protocol.Batch) func(context.Context, protocol.Batch) error {
	return func(_ context.Context, b protocol.Batch) error {
		f.log = append(f.log, fmt.Sprintf("forward %d", b.Round))
		*got = append(*got, b)
		return nil
	}
}

func TestSubmitRejects(t *testing.T) {
	f := newFixture(t, ServiceConfig{})
	if err := f.svc.Submit(0, 1, report(0)); !errors.Is(err, ErrNoRound) {
		t.Fatalf("submit with no round open: %v, want ErrNoRound", err)
	}
	r, err := f.svc.Open(context.Background(), model0)
	if err != nil {
		t.Fatal(err)
	}
	sampled := slices.Clone(f.svc.Sampled())
	in := sampled[0]
	out := -1
	for c := range 10 {
		if !slices.Contains(sampled, c) {
			out = c
			break
		}
	}
	if err := f.svc.Submit(in, r.ID, report(in)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		client int
		round  int64
		rep    []byte
		want   error
	}{
		{"unsampled client", out, r.ID, report(out), ErrNotSampled},
		{"negative client", -1, r.ID, report(0), ErrNotSampled},
		{"client beyond n", 10, r.ID, report(0), ErrNotSampled},
		{"duplicate", in, r.ID, report(in), ErrDuplicate},
		{"previous round", sampled[1], r.ID - 1, report(sampled[1]), ErrWrongRound},
		{"next round", sampled[1], r.ID + 1, report(sampled[1]), ErrWrongRound},
		{"short report", sampled[1], r.ID, []byte{1}, ErrReportLength},
		{"long report", sampled[1], r.ID, []byte{1, 2, 3}, ErrReportLength},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := f.svc.Submit(tc.client, tc.round, tc.rep); !errors.Is(err, tc.want) {
				t.Fatalf("error %v, want %v", err, tc.want)
			}
		})
	}
	// The rejected submissions left no trace: the other clients can still
	// report and the batch has exactly one report per sampled client.
	f.submitAll(t, r.ID, in)
	var got []protocol.Batch
	if _, err := f.svc.Release(context.Background(), f.forward(&got)); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || len(got[0].Reports) != 4 {
		t.Fatalf("forwarded %v", got)
	}
	if _, err := f.svc.Open(context.Background(), model0); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Open(context.Background(), model0); !errors.Is(err, ErrRoundOpen) {
		t.Fatalf("second Open: %v, want ErrRoundOpen", err)
	}
}

// TestReleaseDiscards: incomplete rounds (by default) and batches below the
// minimum are discarded; nothing is debited or forwarded.
func TestReleaseDiscards(t *testing.T) {
	for _, tc := range []struct {
		name    string
		partial bool
		min     int
		missing int // sampled clients that do not deliver
		want    error
	}{
		{"one missing", false, 2, 1, ErrIncomplete},
		{"all missing", false, 1, 4, ErrIncomplete},
		{"partial below minimum", true, 3, 2, ErrBatchTooSmall},
		{"partial, none delivered", true, 1, 4, ErrBatchTooSmall},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, ServiceConfig{Run: runCfg(10, 4, tc.min, 2), ReleasePartial: tc.partial})
			r, err := f.svc.Open(context.Background(), model0)
			if err != nil {
				t.Fatal(err)
			}
			for i, c := range f.svc.Sampled() {
				if i >= tc.missing {
					if err := f.svc.Submit(c, r.ID, report(c)); err != nil {
						t.Fatal(err)
					}
				}
			}
			var got []protocol.Batch
			if _, err := f.svc.Release(context.Background(), f.forward(&got)); !errors.Is(err, tc.want) {
				t.Fatalf("Release: %v, want %v", err, tc.want)
			}
			if len(got) != 0 || len(f.budget.releases) != 0 || slices.ContainsFunc(f.log, func(s string) bool { return s[:5] == "debit" }) {
				t.Fatalf("discarded round: forwarded %d batches, log %v", len(got), f.log)
			}
			// The round is closed: a late report is refused.
			if err := f.svc.Submit(0, r.ID, report(0)); !errors.Is(err, ErrNoRound) {
				t.Fatalf("late report: %v, want ErrNoRound", err)
			}
		})
	}
}

// TestReleasePartial: with ReleasePartial a round with k' >= min of k
// reports is released and debited with k'.
func TestReleasePartial(t *testing.T) {
	f := newFixture(t, ServiceConfig{Run: runCfg(10, 4, 2, 2), ReleasePartial: true})
	r, err := f.svc.Open(context.Background(), model0)
	if err != nil {
		t.Fatal(err)
	}
	skip := f.svc.Sampled()[2]
	f.submitAll(t, r.ID, skip)
	var got []protocol.Batch
	rel, err := f.svc.Release(context.Background(), f.forward(&got))
	if err != nil {
		t.Fatal(err)
	}
	if rel.Reports != 3 || len(got) != 1 || len(got[0].Reports) != 3 || f.budget.releases[0].Reports != 3 {
		t.Fatalf("release %+v, batches %v", rel, got)
	}
}

// TestDebitBeforeForward: the budget is debited exactly once per round,
// before the batch is forwarded, with the batch's digest; a refused debit
// forwards nothing.
func TestDebitBeforeForward(t *testing.T) {
	f := newFixture(t, ServiceConfig{LastRound: 41})
	var got []protocol.Batch
	for range 3 {
		r, err := f.svc.Open(context.Background(), model0)
		if err != nil {
			t.Fatal(err)
		}
		f.submitAll(t, r.ID, -1)
		if _, err := f.svc.Release(context.Background(), f.forward(&got)); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"check 42", "debit 42", "forward 42", "check 43", "debit 43", "forward 43", "check 44", "debit 44", "forward 44"}
	if !slices.Equal(f.log, want) {
		t.Fatalf("call order %v, want %v", f.log, want)
	}
	for i, b := range got {
		if d := b.Digest(); d != f.budget.releases[i].Digest || b.Run != "run" || f.budget.releases[i].Reports != 4 {
			t.Fatalf("round %d: debited %+v for a batch with digest %x", b.Round, f.budget.releases[i], d)
		}
	}

	// A refused debit: nothing forwarded, the error names the budget's.
	exhausted := errors.New("budget exhausted")
	f.budget.debitErr = exhausted
	f.log = nil
	r, err := f.svc.Open(context.Background(), model0)
	if err != nil {
		t.Fatal(err)
	}
	f.submitAll(t, r.ID, -1)
	_, err = f.svc.Release(context.Background(), f.forward(&got))
	if !errors.Is(err, ErrNotDebited) || !errors.Is(err, exhausted) {
		t.Fatalf("Release with a refusing budget: %v", err)
	}
	if !slices.Equal(f.log, []string{"check 45", "debit 45"}) || len(got) != 3 {
		t.Fatalf("refused debit: log %v, %d batches forwarded", f.log, len(got))
	}

	// A failing forward after a successful debit is reported with the
	// release (the round is spent).
	f.budget.debitErr = nil
	r, err = f.svc.Open(context.Background(), model0)
	if err != nil {
		t.Fatal(err)
	}
	f.submitAll(t, r.ID, -1)
	lost := errors.New("server unreachable")
	rel, err := f.svc.Release(context.Background(), func(context.Context, protocol.Batch) error { return lost })
	if !errors.Is(err, lost) || rel.Round != r.ID || rel.Reports != 4 {
		t.Fatalf("failed forward: release %+v, error %v", rel, err)
	}
}

// TestCheckRefusesBeforeSampling: a budget that cannot take another round
// stops Open before any client is sampled or any round id is used.
func TestCheckRefusesBeforeSampling(t *testing.T) {
	f := newFixture(t, ServiceConfig{})
	f.budget.checkErr = errors.New("target epsilon reached")
	if _, err := f.svc.Open(context.Background(), model0); !errors.Is(err, f.budget.checkErr) {
		t.Fatalf("Open: %v", err)
	}
	if f.rnd.calls != 0 || f.svc.Sampled() != nil || f.svc.LastRound() != 0 {
		t.Fatalf("refused round sampled %d times, last round %d", f.rnd.calls, f.svc.LastRound())
	}
}

// TestRoundIDs: ids continue after LastRound and are never reused, a
// discarded round included; the round message is the server's model,
// unchanged, whatever the sample.
func TestRoundIDs(t *testing.T) {
	f := newFixture(t, ServiceConfig{LastRound: 7})
	other := newFixture(t, ServiceConfig{LastRound: 7})
	other.rnd.inner = newSeeded(t, 10, 4, 99) // a different sample
	var got []protocol.Batch
	for i, complete := range []bool{true, false, true} {
		r, err := f.svc.Open(context.Background(), model0)
		if err != nil {
			t.Fatal(err)
		}
		r2, err := other.svc.Open(context.Background(), model0)
		if err != nil {
			t.Fatal(err)
		}
		if r.ID != int64(8+i) || r.Model.Run != model0.Run || r.Model.Version != model0.Version || &r.Model.Params[0] != &model0.Params[0] {
			t.Fatalf("round %d: message %+v", i, r)
		}
		if r.ID != r2.ID || r.Model.Version != r2.Model.Version {
			t.Fatalf("round message depends on the sample: %+v vs %+v", r, r2)
		}
		skip := -1
		if !complete {
			skip = f.svc.Sampled()[0]
		}
		f.submitAll(t, r.ID, skip)
		f.svc.Release(context.Background(), f.forward(&got))
		other.svc.Release(context.Background(), other.forward(new([]protocol.Batch)))
	}
	if f.svc.LastRound() != 10 || len(got) != 2 || got[0].Round != 8 || got[1].Round != 10 {
		t.Fatalf("last round %d, forwarded rounds %v", f.svc.LastRound(), got)
	}
}

// TestReleasedBatchIsAFreshPermutation: the batch holds exactly the
// submitted reports, in fresh memory.
func TestReleasedBatchIsAFreshPermutation(t *testing.T) {
	f := newFixture(t, ServiceConfig{Run: runCfg(1000, 300, 300, 2)})
	r, err := f.svc.Open(context.Background(), model0)
	if err != nil {
		t.Fatal(err)
	}
	var in [][]byte
	for _, c := range f.svc.Sampled() {
		rep := report(c)
		in = append(in, rep)
		if err := f.svc.Submit(c, r.ID, rep); err != nil {
			t.Fatal(err)
		}
	}
	var got []protocol.Batch
	if _, err := f.svc.Release(context.Background(), f.forward(&got)); err != nil {
		t.Fatal(err)
	}
	out := got[0].Reports
	key := func(rs [][]byte) []string {
		var s []string
		for _, r := range rs {
			s = append(s, string(r))
		}
		return s
	}
	a, b := key(in), key(out)
	if slices.Equal(a, b) {
		t.Fatal("released in submission order")
	}
	slices.Sort(a)
	slices.Sort(b)
	if !slices.Equal(a, b) {
		t.Fatal("released reports are not the submitted ones")
	}
	for _, o := range out {
		for _, i := range in {
			if &o[0] == &i[0] {
				t.Fatal("a released report shares memory with a submitted one")
			}
		}
	}
}

// TestServicePermutationUniform: the order in which the service releases
// the reports of one round is uniform over all 4! = 24 orders (chi-square,
// 23 degrees of freedom, alpha = 1e-6): seeded over 48,000 rounds, and
// with crypto/rand over 3 reports (6 orders, 12,000 rounds; random each
// run, false alarm 1e-6).
func TestServicePermutationUniform(t *testing.T) {
	for _, tc := range []struct {
		name   string
		k      int
		rounds int
		rnd    func() Randomness
	}{
		{"seeded", 4, 48000, func() Randomness { return newSeeded(t, 4, 4, 3) }},
		{"crypto", 3, 12000, func() Randomness {
			r, err := NewCryptoRandomness(3, 3)
			if err != nil {
				t.Fatal(err)
			}
			return r
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var log []string
			svc, err := NewService(ServiceConfig{Run: runCfg(tc.k, tc.k, tc.k, 2), Budget: &fakeBudget{log: &log}, Randomness: tc.rnd()})
			if err != nil {
				t.Fatal(err)
			}
			counts := map[string]float64{}
			for range tc.rounds {
				log = log[:0]
				r, err := svc.Open(context.Background(), model0)
				if err != nil {
					t.Fatal(err)
				}
				for c := range tc.k { // submission order fixed: client 0 first
					if err := svc.Submit(c, r.ID, report(c)); err != nil {
						t.Fatal(err)
					}
				}
				_, err = svc.Release(context.Background(), func(_ context.Context, b protocol.Batch) error {
					var key []byte
					for _, rep := range b.Reports {
						key = append(key, rep[0])
					}
					counts[string(key)]++
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
			}
			perms := 1
			for i := 2; i <= tc.k; i++ {
				perms *= i
			}
			if len(counts) != perms {
				t.Fatalf("saw %d orders, want %d", len(counts), perms)
			}
			e := float64(tc.rounds) / float64(perms)
			var chi2 float64
			for _, c := range counts {
				chi2 += (c - e) * (c - e) / e
			}
			crit := distuv.ChiSquared{K: float64(perms - 1)}.Quantile(1 - 1e-6)
			if chi2 > crit {
				t.Fatalf("chi2 = %.1f > %.1f: release order not uniform (%v)", chi2, crit, counts)
			}
		})
	}
}

// TestConcurrentSubmit: clients submitting concurrently (run with -race).
func TestConcurrentSubmit(t *testing.T) {
	f := newFixture(t, ServiceConfig{Run: runCfg(500, 200, 200, 2)})
	r, err := f.svc.Open(context.Background(), model0)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 400)
	for _, c := range f.svc.Sampled() {
		wg.Add(2)
		go func() { defer wg.Done(); errs <- f.svc.Submit(c, r.ID, report(c)) }()
		go func() { defer wg.Done(); errs <- f.svc.Submit(c, r.ID, report(c)) }() // a duplicate
	}
	wg.Wait()
	close(errs)
	var ok, dup int
	for err := range errs {
		switch {
		case err == nil:
			ok++
		case errors.Is(err, ErrDuplicate):
			dup++
		default:
			t.Fatal(err)
		}
	}
	if ok != 200 || dup != 200 {
		t.Fatalf("%d accepted, %d duplicates; want 200 each", ok, dup)
	}
	if _, err := f.svc.Release(context.Background(), f.forward(new([]protocol.Batch))); err != nil {
		t.Fatal(err)
	}
}

func TestNewServiceRefuses(t *testing.T) {
	var log []string
	b := &fakeBudget{log: &log}
	none := runCfg(10, 4, 4, 2)
	none.Randomizer = protocol.RandomizerNone
	bad := runCfg(10, 4, 5, 2)
	for _, tc := range []struct {
		name string
		cfg  ServiceConfig
	}{
		{"no budget", ServiceConfig{Run: runCfg(10, 4, 4, 2)}},
		{"randomizer none", ServiceConfig{Run: none, Budget: b}},
		{"min batch above k", ServiceConfig{Run: bad, Budget: b}},
		{"negative last round", ServiceConfig{Run: runCfg(10, 4, 4, 2), Budget: b, LastRound: -1}},
	} {
		if _, err := NewService(tc.cfg); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
}

// durableBudget is a fakeBudget that remembers rounds beyond the process.
type durableBudget struct {
	fakeBudget
	last int64
}

func (d *durableBudget) LastRound(_ context.Context, run string) (int64, error) {
	if run != "run" {
		return 0, errors.New("unknown run")
	}
	return d.last, nil
}

// TestRoundIDsContinueAfterLedger: rounds debited after the checkpoint the
// service was configured from (LastRound 5) are not reused: ids continue
// after the durable budget's last round (17), and after the checkpoint's
// when that is later.
func TestRoundIDsContinueAfterLedger(t *testing.T) {
	for _, tc := range []struct{ checkpoint, ledger, want int64 }{{5, 17, 18}, {20, 17, 21}, {0, 0, 1}} {
		var log []string
		b := &durableBudget{fakeBudget: fakeBudget{log: &log}, last: tc.ledger}
		svc, err := NewService(ServiceConfig{Run: runCfg(10, 4, 4, 2), Budget: b, Randomness: newSeeded(t, 10, 4, 1), LastRound: tc.checkpoint})
		if err != nil {
			t.Fatal(err)
		}
		r, err := svc.Open(context.Background(), model0)
		if err != nil || r.ID != tc.want {
			t.Errorf("checkpoint %d, ledger %d: first round %d (%v), want %d", tc.checkpoint, tc.ledger, r.ID, err, tc.want)
		}
	}
}
