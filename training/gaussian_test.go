package training

import (
	"bytes"
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/shuffledp/shuffledp/approxdp"
	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/figures"
	"github.com/shuffledp/shuffledp/ledger"
	"github.com/shuffledp/shuffledp/metrics"
	"github.com/shuffledp/shuffledp/route"
	"github.com/shuffledp/shuffledp/shuffler"
)

// gaussianConfigs are the Gaussian settings of the determinism and
// checkpoint tests: per-client reports and summed noise, k of n and
// check-in, and the central baseline.
func gaussianConfigs(t *testing.T) []Config {
	var cfgs []Config
	for _, v := range []struct {
		randomizer, participation string
		noiseSum                  bool
	}{
		{RandomizerGaussian, ParticipationSample, false},
		{RandomizerGaussian, ParticipationCheckIn, false},
		{RandomizerGaussian, ParticipationSample, true},
		{RandomizerGaussian, ParticipationCheckIn, true},
		{RandomizerCentralGaussian, ParticipationSample, false},
	} {
		c := baseConfig(t)
		c.Randomizer, c.Participation, c.NoiseSum, c.Sigma, c.Clip = v.randomizer, v.participation, v.noiseSum, 0.8, 0.5
		if v.participation == ParticipationCheckIn {
			c.Rate = 0.1
		}
		cfgs = append(cfgs, c)
	}
	return cfgs
}

func gaussianName(c Config) string {
	s := c.Randomizer + "/" + c.Participation
	if c.Participation == "" {
		s += ParticipationSample
	}
	if c.NoiseSum {
		s += "/noise-sum"
	}
	return s
}

// accountEpsilon is what `shuffledp account --bound best` reports for
// rounds applications of ev at delta (route.Best: every route), the
// ledger's statement bit for bit up to 64 rounds (cmd/shuffledp checks the
// CLI itself).
func accountEpsilon(t *testing.T, ev event.Event, rounds int, delta float64) float64 {
	t.Helper()
	return bestEpsilon(t, ev, rounds, delta)
}

// bestEpsilon is route.Best's epsilon (every route, PLD included) of rounds
// identical rounds of ev: what the target-epsilon stop decides by.
func bestEpsilon(t *testing.T, ev event.Event, rounds int, delta float64) float64 {
	t.Helper()
	r, err := route.Best([]event.Composed{{Event: ev, Count: int64(rounds)}}, delta, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r.Epsilon
}

// TestGaussianEpsilonMatchesAccount is the Gaussian runs' acceptance check for training:
// a Gaussian-client run (k of n) and a check-in run (and the summed-noise
// and central variants) report at every evaluation the epsilon that
// `account` gives for the rounds completed: subsampled-shuffle-gaussian
// (n, k, sigma), checkin-gaussian (n, rate, sigma), sampled-gaussian
// (rate, sigma); the ledger holds one event per round, each with the
// batch's real size. Both adjacencies: the default (replace-one;
// add-remove for central-gaussian) and zero-out, which every record and
// event names.
func TestGaussianEpsilonMatchesAccount(t *testing.T) {
	var cfgs []Config
	for _, cfg := range gaussianConfigs(t) {
		zo := cfg
		zo.Adjacency = event.AdjacencyZeroOut
		cfgs = append(cfgs, cfg, zo)
	}
	for _, cfg := range cfgs {
		adjacency := cfg.Adjacency
		if adjacency == "" {
			adjacency = event.AdjacencyReplaceOne
			if cfg.Randomizer == RandomizerCentralGaussian {
				adjacency = event.AdjacencyAddRemove
			}
		}
		t.Run(gaussianName(cfg)+"/"+adjacency, func(t *testing.T) {
			cfg.Epochs, cfg.EvalEvery = 1, 4 // 10 rounds: evaluations at 0, 4, 8, 10
			tr, err := New(cfg, newLogReg(t, 10, 4), blobs(cfg.Clients, 10, 4, 1, 1), blobs(100, 10, 4, 1, 2))
			if err != nil {
				t.Fatal(err)
			}
			var recs []metrics.Record
			if _, err := tr.Run(context.Background(), Hooks{OnEval: func(r metrics.Record) error { recs = append(recs, r); return nil }}); err != nil {
				t.Fatal(err)
			}
			if len(recs) != 4 || recs[3].Round != 10 {
				t.Fatalf("%d evaluations, last at round %d; want 4, the last at 10", len(recs), recs[len(recs)-1].Round)
			}
			cfgV := tr.Config()
			ev := cfgV.RoundEvent()
			if ev.Adjacency != adjacency || cfgV.Adjacency != adjacency {
				t.Fatalf("round event %s (config adjacency %q), want adjacency %s", ev, cfgV.Adjacency, adjacency)
			}
			for _, r := range recs {
				if r.Adjacency != adjacency {
					t.Errorf("round %d: record adjacency %q, want %s", r.Round, r.Adjacency, adjacency)
				}
				want := 0.0
				if r.Round > 0 {
					want = accountEpsilon(t, ev, r.Round, cfg.Delta)
				}
				if r.Epsilon == nil || *r.Epsilon != want {
					t.Errorf("round %d: epsilon %v, account gives %.17g", r.Round, r.Epsilon, want)
				}
				if r.Sigma != cfg.Sigma || r.Eps0 != 0 || r.Bound != "best" || (r.Round > 0 && r.BoundWinner == "") || route.IsConjecture(r.BoundWinner) {
					t.Errorf("round %d: sigma %g eps0 %g bound %q winner %q", r.Round, r.Sigma, r.Eps0, r.Bound, r.BoundWinner)
				}
			}
			entries := tr.Ledger().Entries()
			if len(entries) != 10 {
				t.Fatalf("ledger has %d entries, want 10", len(entries))
			}
			variable := false
			for _, e := range entries {
				want := ev
				if ev.Mechanism == event.SubsampledShuffleGaussian {
					want.K = int64(e.Reports) // the batch's size, k
				}
				if e.Event != want || e.Reports < 1 {
					t.Fatalf("round %d debited %+v with %d reports, want %+v", e.Round, e.Event, e.Reports, want)
				}
				if e.Reports != cfg.Sample {
					variable = true
				}
			}
			if random := cfg.Participation == ParticipationCheckIn || cfg.Randomizer == RandomizerCentralGaussian; variable != random {
				t.Errorf("batch sizes vary: %v; want %v (participation %s, randomizer %s)", variable, random, cfg.Participation, cfg.Randomizer)
			}
		})
	}
}

// TestNoiseSumAddsTheSummedNoise: with SGD at learning rate 1 the step is
// -(sum of clipped gradients + noise)/m; the per-client path and the
// summed-noise path of the same seed have the same participants and
// clipped gradients, so m times the difference of their steps is the
// difference of two independent N(0, m C^2 sigma^2 I) vectors: its
// per-coordinate variance is 2 m C^2 sigma^2 (checked over the d = 804
// coordinates of one step, within 5 standard deviations of chi^2_d / d).
func TestNoiseSumAddsTheSummedNoise(t *testing.T) {
	for _, participation := range []string{ParticipationSample, ParticipationCheckIn} {
		t.Run(participation, func(t *testing.T) {
			cfg := baseConfig(t)
			cfg.Randomizer, cfg.Participation, cfg.Sigma, cfg.Clip = RandomizerGaussian, participation, 2, 0.5
			cfg.LR = mustSchedule(t, "1")
			if participation == ParticipationCheckIn {
				cfg.Rate = 0.1
			}
			const dim = 200 // logistic regression on 200 features, 4 classes: d = 804
			var deltas [2][]float64
			var m [2]int
			for i, noiseSum := range []bool{false, true} {
				c := cfg
				c.NoiseSum = noiseSum
				tr, err := New(c, newLogReg(t, dim, 4), blobs(c.Clients, dim, 4, 1, 1), nil)
				if err != nil {
					t.Fatal(err)
				}
				before := append([]float64(nil), tr.Model().Params()...)
				steps(t, tr, 1)
				m[i] = int(tr.Ledger().Entries()[0].Reports)
				deltas[i] = make([]float64, len(before))
				for j, p := range tr.Model().Params() {
					deltas[i][j] = before[j] - p // (sum + noise)/m
				}
			}
			if m[0] != m[1] {
				t.Fatalf("batch sizes %d (per client) and %d (noise sum): the participants differ", m[0], m[1])
			}
			mf := float64(m[0])
			var ss float64
			for j := range deltas[0] {
				d := mf * (deltas[0][j] - deltas[1][j])
				ss += d * d
			}
			d := float64(len(deltas[0]))
			got, want := ss/d, 2*mf*cfg.Clip*cfg.Clip*cfg.Sigma*cfg.Sigma
			// ss/want ~ chi^2_d / d: standard deviation sqrt(2/d) = 5%.
			if math.Abs(got/want-1) > 5*math.Sqrt(2/d) {
				t.Errorf("per-coordinate variance of the noise difference %.4g, want 2 m C^2 sigma^2 = %.4g", got, want)
			}
		})
	}
}

// TestCheckInBatchVaries: under check-in the batch size is random,
// Bin(n, rate), every batch is debited with its own size, and Sample is the
// expected batch size.
func TestCheckInBatchVaries(t *testing.T) {
	cfg := baseConfig(t)
	cfg.Randomizer, cfg.Participation, cfg.Rate, cfg.Sigma, cfg.Clip = RandomizerGaussian, ParticipationCheckIn, 0.1, 1, 0.5
	budget := &recordingBudget{}
	tr, err := New(cfg, newLogReg(t, 10, 4), blobs(cfg.Clients, 10, 4, 1, 1), nil, WithBudget(budget))
	if err != nil {
		t.Fatal(err)
	}
	steps(t, tr, 20)
	sizes := map[int]bool{}
	total := 0
	for _, r := range budget.releases {
		sizes[r.Reports] = true
		total += r.Reports
	}
	// Bin(600, 0.1): mean 60, sd 7.3; 20 rounds: the mean within 5 sd/sqrt(20).
	if mean := float64(total) / 20; len(sizes) < 5 || math.Abs(mean-60) > 5*7.35/math.Sqrt(20) {
		t.Errorf("batch sizes %v over 20 rounds, mean %g; want several sizes around 60", sizes, mean)
	}
	if tr.Config().Sample != 60 {
		t.Errorf("Sample = %d, want the expected batch size 60", tr.Config().Sample)
	}
}

// TestGaussianTargetEpsilon: the ledger refuses the round that would pass
// the target, for the check-in and the central runs as for the others.
func TestGaussianTargetEpsilon(t *testing.T) {
	for _, cfg := range gaussianConfigs(t) {
		t.Run(gaussianName(cfg), func(t *testing.T) {
			if err := cfg.Validate(); err != nil {
				t.Fatal(err)
			}
			ev := cfg.RoundEvent()
			// The stop decides by best, the PLD route included.
			e3, e4 := bestEpsilon(t, ev, 3, cfg.Delta), bestEpsilon(t, ev, 4, cfg.Delta)
			cfg.TargetEpsilon = (e3 + e4) / 2
			tr, err := New(cfg, newLogReg(t, 10, 4), blobs(cfg.Clients, 10, 4, 1, 1), nil)
			if err != nil {
				t.Fatal(err)
			}
			steps(t, tr, 3)
			if _, err := tr.Step(); !errors.Is(err, ErrBudgetExhausted) || !errors.Is(err, ledger.ErrBudgetExhausted) {
				t.Fatalf("4th round: %v, want ErrBudgetExhausted", err)
			}
			if tr.Round() != 3 || tr.Ledger().Rounds() != 3 {
				t.Fatalf("round %d, ledger %d; want 3 and 3", tr.Round(), tr.Ledger().Rounds())
			}
		})
	}
}

func TestGaussianConfigNamesTheFlag(t *testing.T) {
	gauss := func(c *Config) { c.Randomizer, c.Sigma, c.Eps0 = RandomizerGaussian, 1, 0 }
	tests := []struct {
		flag   string
		mutate func(*Config)
	}{
		{"sigma", func(c *Config) { gauss(c); c.Sigma = 0 }},
		{"sigma", func(c *Config) { gauss(c); c.Sigma = math.Inf(1) }},
		{"sigma", func(c *Config) { c.Randomizer, c.Eps0, c.Sigma = RandomizerRInf, 1, 1 }},
		{"eps0", func(c *Config) { gauss(c); c.Eps0 = 1 }},
		{"noise-sum", func(c *Config) { c.Randomizer, c.Eps0, c.NoiseSum = RandomizerRInf, 1, true }},
		{"noise-sum", func(c *Config) { gauss(c); c.Randomizer, c.NoiseSum = RandomizerCentralGaussian, true }},
		{"participation", func(c *Config) { gauss(c); c.Participation = "poisson" }},
		{"participation", func(c *Config) {
			c.Randomizer, c.Eps0, c.Participation, c.Rate = RandomizerRInf, 1, ParticipationCheckIn, 0.5
		}},
		{"rate", func(c *Config) { gauss(c); c.Participation, c.Rate = ParticipationCheckIn, 0 }},
		{"rate", func(c *Config) { gauss(c); c.Participation, c.Rate = ParticipationCheckIn, 1.5 }},
		{"rate", func(c *Config) { gauss(c); c.Participation, c.Rate = ParticipationCheckIn, 0.01 }}, // (0.99)^600: empty rounds too likely
		{"rate", func(c *Config) { gauss(c); c.Rate = 0.5 }},                                         // rate without check-in or central
		{"rate", func(c *Config) { gauss(c); c.Randomizer, c.Rate = RandomizerCentralGaussian, -1 }},
		{"clip-norm", func(c *Config) { gauss(c); c.ClipNorm = NormLInf }},
		{"adjacency", func(c *Config) { gauss(c); c.Adjacency = "replace" }},
		{"adjacency", func(c *Config) { gauss(c); c.Adjacency = event.AdjacencyAddRemove }},
		{"adjacency", func(c *Config) {
			gauss(c)
			c.Randomizer, c.Adjacency = RandomizerCentralGaussian, event.AdjacencyReplaceOne
		}},
		{"adjacency", func(c *Config) { c.Randomizer, c.Eps0, c.Adjacency = RandomizerRInf, 1, event.AdjacencyZeroOut }},
	}
	for _, tc := range tests {
		c := baseConfig(t)
		tc.mutate(&c)
		err := c.Validate()
		if err == nil || !strings.HasPrefix(err.Error(), tc.flag) {
			t.Errorf("want an error starting with %q, got %v", tc.flag, err)
		}
	}
	// Accepted: the rate sets the expected batch size; central defaults to k/n.
	c := baseConfig(t)
	gauss(&c)
	c.Participation, c.Rate = ParticipationCheckIn, 0.25
	if err := c.Validate(); err != nil || c.Sample != 150 {
		t.Errorf("check-in rate 0.25 of 600: err %v, sample %d (want 150)", err, c.Sample)
	}
	c = baseConfig(t)
	gauss(&c)
	c.Randomizer = RandomizerCentralGaussian
	if err := c.Validate(); err != nil || c.Rate != 0.1 || c.Sample != 60 {
		t.Errorf("central: err %v, rate %g (want 60/600), sample %d", err, c.Rate, c.Sample)
	}
}

// TestCentralGaussianBudgetBeforeStep: a central round is debited (with the
// digest of the noisy sum) before the server steps, and a refused debit
// leaves the model as it was.
func TestCentralGaussianBudgetBeforeStep(t *testing.T) {
	cfg := gaussianConfigs(t)[4]
	budget := &recordingBudget{refuseAt: 3}
	tr, err := New(cfg, newLogReg(t, 10, 4), blobs(cfg.Clients, 10, 4, 1, 1), nil, WithBudget(budget))
	if err != nil {
		t.Fatal(err)
	}
	steps(t, tr, 2)
	before := append([]float64(nil), tr.Model().Params()...)
	if _, err := tr.Step(); !errors.Is(err, errRefused) {
		t.Fatalf("3rd round: %v, want the budget's refusal", err)
	}
	if !bitwiseEqual(before, tr.Model().Params()) || tr.Round() != 2 || tr.Ledger().Rounds() != 2 {
		t.Fatalf("a refused round changed the model or the ledger (round %d, ledger %d)", tr.Round(), tr.Ledger().Rounds())
	}
	for i, r := range budget.releases {
		if e := tr.Ledger().Entries()[i]; e.Digest != r.Digest || e.Round != r.Round {
			t.Errorf("release %d: budget %+v, ledger %+v", i, r, e)
		}
	}
	var _ shuffler.Budget = budget
}

// TestApproxDPRecords: the approximate-DP route's epsilon of a check-in
// run's rounds is approxdp's, grows with the rounds, is larger under the
// LDP diameter than under sensitivity C, and non-check-in runs are refused.
func TestApproxDPRecords(t *testing.T) {
	cfg := gaussianConfigs(t)[1] // check-in, per client
	cfg.Epochs, cfg.EvalEvery = 1, 2
	tr, err := New(cfg, newLogReg(t, 10, 4), blobs(cfg.Clients, 10, 4, 1, 1), nil)
	if err != nil {
		t.Fatal(err)
	}
	var recs []metrics.Record
	if _, err := tr.Run(context.Background(), Hooks{OnEval: func(r metrics.Record) error { recs = append(recs, r); return nil }}); err != nil {
		t.Fatal(err)
	}
	clip, err := figures.ApproxDPRecords(recs, figures.SensitivityClip, 2)
	if err != nil {
		t.Fatal(err)
	}
	diam, err := figures.ApproxDPRecords(recs, figures.SensitivityDiameter, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(clip) != 2 || clip[0].Round != 4 || clip[1].Round != 10 {
		t.Fatalf("rounds %+v, want 4 and 10 (2 of the 5 evaluations after round 0, the last included)", clip)
	}
	for i, r := range clip {
		want, err := approxdp.CheckInGaussianKOV15(int64(cfg.Clients), cfg.Rate, cfg.Sigma, int64(r.Round), cfg.Delta)
		if err != nil || *r.Epsilon != want.Epsilon {
			t.Errorf("round %d: %v, approxdp %v (%v)", r.Round, *r.Epsilon, want.Epsilon, err)
		}
		if !(*diam[i].Epsilon > *r.Epsilon) || (i > 0 && !(*r.Epsilon > *clip[i-1].Epsilon)) {
			t.Errorf("round %d: sensitivity C %v, diameter %v", r.Round, *r.Epsilon, *diam[i].Epsilon)
		}
	}
	// The run's adjacency: replace-one (the default) is sensitivity 2C;
	// records without an adjacency (written before it was recorded) are
	// zero-out, sensitivity C; records that disagree are refused.
	if a, err := figures.RunAdjacency(recs); err != nil || a != event.AdjacencyReplaceOne {
		t.Fatalf("RunAdjacency %q, %v; want replace-one", a, err)
	}
	run, err := figures.ApproxDPRecords(recs, figures.SensitivityAdjacency, 2)
	if err != nil || len(run) != 2 || *run[1].Epsilon != *diam[1].Epsilon {
		t.Errorf("replace-one run: %v (%v), want the diameter's %v", run, err, *diam[1].Epsilon)
	}
	legacy := slices.Clone(recs)
	for i := range legacy {
		legacy[i].Adjacency = ""
	}
	run, err = figures.ApproxDPRecords(legacy, figures.SensitivityAdjacency, 2)
	if err != nil || len(run) != 2 || *run[1].Epsilon != *clip[1].Epsilon {
		t.Errorf("legacy (zero-out) run: %v (%v), want sensitivity C's %v", run, err, *clip[1].Epsilon)
	}
	// The plot's series: one under replace-one (sensitivity 2C), two for
	// a zero-out run (C, and the paper's 2C).
	if ser, err := figures.ApproxDPSeries(recs, 2); err != nil || len(ser) != 1 || !strings.Contains(ser[0].Label, "replace-one: sensitivity 2C") ||
		*ser[0].Records[1].Epsilon != *diam[1].Epsilon {
		t.Errorf("replace-one series: %+v (%v)", ser, err)
	}
	if ser, err := figures.ApproxDPSeries(legacy, 2); err != nil || len(ser) != 2 ||
		*ser[0].Records[1].Epsilon != *clip[1].Epsilon || *ser[1].Records[1].Epsilon != *diam[1].Epsilon {
		t.Errorf("zero-out series: %+v (%v)", ser, err)
	}
	legacy[0].Adjacency = event.AdjacencyReplaceOne
	if _, err := figures.ApproxDPRecords(legacy, figures.SensitivityAdjacency, 2); err == nil {
		t.Error("records of two adjacencies were accepted")
	}
	recs[1].Participation = ""
	if _, err := figures.ApproxDPRecords(recs, figures.SensitivityClip, 2); err == nil {
		t.Error("a run without check-in was accepted")
	}
}

// TestGaussianCheckpointAdjacency: a resume must keep the adjacency. A
// zero-out checkpoint holds no adjacency, exactly what a checkpoint written
// before the field existed holds (gob omits the empty string), so an old
// run resumes under zero-out and is refused under the new default
// replace-one; a replace-one checkpoint is refused under zero-out.
func TestGaussianCheckpointAdjacency(t *testing.T) {
	base := baseConfig(t)
	base.Randomizer, base.Sigma, base.Eps0, base.Clip = RandomizerGaussian, 0.8, 0, 0.5
	with := func(a string) Config { c := base; c.Adjacency = a; return c }
	for _, tc := range []struct {
		wrote, resume string
		ok            bool
	}{
		{event.AdjacencyZeroOut, event.AdjacencyZeroOut, true},
		{event.AdjacencyZeroOut, "", false}, // the default is replace-one
		{"", event.AdjacencyReplaceOne, true},
		{event.AdjacencyReplaceOne, event.AdjacencyZeroOut, false},
	} {
		var buf bytes.Buffer
		if err := runRounds(t, with(tc.wrote), 2).WriteCheckpoint(&buf); err != nil {
			t.Fatal(err)
		}
		err := runRounds(t, with(tc.resume), 0).ReadCheckpoint(bytes.NewReader(buf.Bytes()))
		switch {
		case tc.ok && err != nil:
			t.Errorf("written %q, resumed %q: %v", tc.wrote, tc.resume, err)
		case !tc.ok && (err == nil || !strings.Contains(err.Error(), "adjacency")):
			t.Errorf("written %q, resumed %q: error %v, want one naming adjacency", tc.wrote, tc.resume, err)
		}
	}
}
