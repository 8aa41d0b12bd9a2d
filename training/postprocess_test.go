package training

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"

	"github.com/shuffledp/shuffledp/accounting"
	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/metrics"
	"github.com/shuffledp/shuffledp/route"
	"github.com/shuffledp/shuffledp/server"
)

// TestScheduleAtEpochBoundaries: the composed schedule (base "1,10:0.5",
// 4 steps an epoch) at and around its breakpoints, against values worked
// out by hand.
func TestScheduleAtEpochBoundaries(t *testing.T) {
	base := mustSchedule(t, "1,10:0.5")
	cos := func(spec string) LRDecay {
		d, err := ParseLRDecay(spec)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	for _, tc := range []struct {
		name   string
		sched  Schedule
		points map[float64]float64 // epoch -> rate
	}{
		{"piecewise", Schedule{Base: base, StepEpochs: 0.25},
			map[float64]float64{0: 1, 9.75: 1, 10: 0.5, 300: 0.5}},
		// Warm-up over 2 epochs = 8 steps: step s+1 gets (s+1)/8.
		{"warmup", Schedule{Base: base, Warmup: 2, StepEpochs: 0.25},
			map[float64]float64{0: 0.125, 0.25: 0.25, 1: 0.625, 1.75: 1, 2: 1, 10: 0.5}},
		// cosine:20: (1+cos(pi e/20))/2 = 1, 1/2 at e = 10, 0 from 20.
		{"cosine", Schedule{Base: base, Decay: cos("cosine:20"), StepEpochs: 0.25},
			map[float64]float64{0: 1, 5: (1 + math.Sqrt2/2) / 2, 10: 0.5 * 0.5, 20: 0, 25: 0}},
		// cosine:20:0.1: 0.1 + 0.9 (1+cos)/2.
		{"cosine-min", Schedule{Base: base, Decay: cos("cosine:20:0.1"), StepEpochs: 0.25},
			map[float64]float64{0: 1, 10: 0.5 * 0.55, 20: 0.5 * 0.1, 40: 0.5 * 0.1}},
		// step:5:0.5: halves at epochs 5, 10, 15, ...
		{"step", Schedule{Base: base, Decay: cos("step:5:0.5"), StepEpochs: 0.25},
			map[float64]float64{0: 1, 4.75: 1, 5: 0.5, 9.75: 0.5, 10: 0.5 * 0.25, 15: 0.5 * 0.125}},
		// Warm-up and decay multiply.
		{"warmup-step", Schedule{Base: base, Warmup: 2, Decay: cos("step:1:0.5"), StepEpochs: 0.25},
			map[float64]float64{0: 0.125, 1: 0.625 * 0.5, 2: 0.25}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for e, want := range tc.points {
				if got := tc.sched.Rate(e); math.Abs(got-want) > 1e-15 {
					t.Errorf("Rate(%g) = %.17g, want %.17g", e, got, want)
				}
			}
		})
	}
	// Without warm-up and decay the rate is the base rate, bit for bit.
	s := Schedule{Base: mustSchedule(t, "0.3,70:0.18"), StepEpochs: 1.0 / 6}
	for r := range 1300 {
		e := float64(r) * 10000 / 60000
		if got, want := s.Rate(e), s.Base.Rate(r*10000/60000); got != want {
			t.Fatalf("round %d: %g, base %g", r, got, want)
		}
	}
}

func TestParseLRDecay(t *testing.T) {
	for _, tc := range []struct{ spec, str string }{
		{"none", "none"}, {"", "none"}, {"cosine:200", "cosine:200"}, {" cosine : 200 : 0.01 ", "cosine:200:0.01"},
		{"step:50:0.5", "step:50:0.5"}, {"cosine:12.5:0", "cosine:12.5"},
	} {
		d, err := ParseLRDecay(tc.spec)
		if err != nil || d.String() != tc.str {
			t.Errorf("ParseLRDecay(%q) = %q, %v; want %q", tc.spec, d.String(), err, tc.str)
			continue
		}
		back, err := ParseLRDecay(d.String())
		if err != nil || back != d {
			t.Errorf("round trip of %q: %+v, %v", tc.spec, back, err)
		}
	}
	for _, spec := range []string{"cosine", "cosine:0", "cosine:-1", "cosine:10:1", "cosine:10:-0.1", "cosine:inf",
		"step:5", "step:0:0.5", "step:5:0", "step:5:1.5", "step:2.5:0.5", "none:3", "linear:10", "cosine:10:0.1:2"} {
		if _, err := ParseLRDecay(spec); err == nil || !strings.Contains(err.Error(), "lr-decay") {
			t.Errorf("ParseLRDecay(%q): error %v, want one naming lr-decay", spec, err)
		}
	}
}

// TestTrainerSchedule: the rounds of a trainer step with the composed
// schedule at s*k/n (10 rounds an epoch here).
func TestTrainerSchedule(t *testing.T) {
	cfg := baseConfig(t)
	cfg.Randomizer, cfg.Eps0, cfg.Clip = RandomizerRInf, 2, 0.5
	cfg.LRWarmup = 1
	cfg.LRDecay = LRDecay{Kind: DecayStep, Every: 1, Gamma: 0.5}
	tr := runRounds(t, cfg, 0)
	for r := range 25 {
		st, err := tr.Step()
		if err != nil {
			t.Fatal(err)
		}
		want := 0.5 * math.Min(1, float64(r+1)/10) * math.Pow(0.5, float64(r/10))
		if math.Abs(st.LR-want) > 1e-15 {
			t.Fatalf("round %d: lr %.17g, want %.17g", r+1, st.LR, want)
		}
	}
}

// optimizerConfigs are the server post-processing settings the resume
// tests run under.
func optimizerConfigs() []struct {
	opt server.Optimizer
	ema float64
} {
	return []struct {
		opt server.Optimizer
		ema float64
	}{
		{server.Optimizer{}, 0.9},
		{server.Optimizer{Name: server.OptimizerMomentum, Momentum: 0.9}, 0},
		{server.Optimizer{Name: server.OptimizerNesterov, Momentum: 0.8}, 0.95},
		{server.Optimizer{Name: server.OptimizerAdam, Beta1: 0.9, Beta2: 0.999, Epsilon: 1e-8}, 0.5},
	}
}

// TestCheckpointResumeOptimizers: with every optimizer (and an EMA), N
// rounds straight == M rounds, checkpoint, resume in a fresh trainer, N-M
// rounds: parameters and the average bit for bit. The EMA never changes
// the parameters.
func TestCheckpointResumeOptimizers(t *testing.T) {
	const n, m = 13, 5
	for _, oc := range optimizerConfigs() {
		for _, r := range []string{RandomizerRInf, RandomizerNone} {
			t.Run(oc.opt.String()+"-"+r, func(t *testing.T) {
				cfg := baseConfig(t)
				cfg.Randomizer, cfg.Eps0, cfg.Clip, cfg.Optimizer, cfg.EMA = r, 2, 0.5, oc.opt, oc.ema
				cfg.LR = mustSchedule(t, "0.05")
				cfg.LRDecay = LRDecay{Kind: DecayCosine, End: 3}
				straight := runRounds(t, cfg, n)
				first := runRounds(t, cfg, m)
				var buf bytes.Buffer
				if err := first.WriteCheckpoint(&buf); err != nil {
					t.Fatal(err)
				}
				resumed := runRounds(t, cfg, 0)
				if err := resumed.ReadCheckpoint(bytes.NewReader(buf.Bytes())); err != nil {
					t.Fatal(err)
				}
				steps(t, resumed, n-m)
				if !bitwiseEqual(straight.Model().Params(), resumed.Model().Params()) {
					t.Fatal("resumed run differs from the straight run")
				}
				d := straight.Model().NumParams()
				a, b := make([]float64, d), make([]float64, d)
				if straight.server.Averaged(a) != (oc.ema > 0) || resumed.server.Averaged(b) != (oc.ema > 0) || !bitwiseEqual(a, b) {
					t.Fatal("resumed average differs from the straight run's")
				}
				if oc.ema > 0 {
					c := cfg
					c.EMA = 0
					if !bitwiseEqual(runRounds(t, c, n).Model().Params(), straight.Model().Params()) {
						t.Fatal("the EMA changed the parameters")
					}
				}
			})
		}
	}
}

// checkpointStateV2 and serverStateV2 are the checkpoint layout of
// version 2 (before the server had an optimizer), to write the checkpoint
// an earlier build wrote.
type checkpointStateV2 struct {
	Version    int
	Model      string
	NumParams  int
	Clients    int
	Sample     int
	Randomizer string
	ClipNorm   string
	Clip       float64
	ClampLinf  bool
	Eps0       float64
	Seed       uint64
	Project    float64
	Crypto     bool
	Server     struct {
		Steps  int64
		Params []float64
	}
	Shuffler shufflerState
}

// TestCheckpointOptimizerMismatch: a checkpoint resumes only under the
// optimizer, optimizer parameters and EMA decay it was written with, and a
// version-2 checkpoint (written before optimizers) resumes a plain SGD run
// bit for bit and is refused clearly by any other.
func TestCheckpointOptimizerMismatch(t *testing.T) {
	cfg := baseConfig(t)
	cfg.Randomizer, cfg.Eps0, cfg.Clip = RandomizerRInf, 2, 0.5
	adam := cfg
	adam.Optimizer, adam.EMA = server.Optimizer{Name: server.OptimizerAdam, Beta1: 0.9, Beta2: 0.999, Epsilon: 1e-8}, 0.9
	var buf bytes.Buffer
	if err := runRounds(t, adam, 3).WriteCheckpoint(&buf); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		mutate func(*Config)
		want   string
	}{
		{"optimizer", func(c *Config) { c.Optimizer = server.Optimizer{Name: server.OptimizerMomentum, Momentum: 0.9} }, "optimizer"},
		{"sgd", func(c *Config) { c.Optimizer = server.Optimizer{} }, "optimizer"},
		{"betas", func(c *Config) { c.Optimizer.Beta2 = 0.99 }, "adam-betas"},
		{"eps", func(c *Config) { c.Optimizer.Epsilon = 1e-6 }, "adam-eps"},
		{"ema", func(c *Config) { c.EMA = 0.99 }, "ema"},
		{"no ema", func(c *Config) { c.EMA = 0 }, "ema"},
	} {
		c := adam
		tc.mutate(&c)
		err := runRounds(t, c, 0).ReadCheckpoint(bytes.NewReader(buf.Bytes()))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s changed: error %v, want one naming %q", tc.name, err, tc.want)
		}
	}

	// A version-2 checkpoint of a plain SGD run after 5 rounds.
	const n, m = 12, 5
	first := runRounds(t, cfg, m)
	rng, err := first.simulation().sim.master.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	old := checkpointStateV2{Version: 2, Model: first.model.Name(), NumParams: first.model.NumParams(),
		Clients: cfg.Clients, Sample: cfg.Sample, Randomizer: cfg.Randomizer, ClipNorm: NormLInf, Clip: cfg.Clip,
		Eps0: cfg.Eps0, Seed: cfg.Seed, Shuffler: shufflerState{RNG: rng, LastRound: first.simulation().shuf.LastRound()}}
	old.Server.Steps, old.Server.Params = int64(first.Round()), first.Model().Params()
	var v2 bytes.Buffer
	if err := encodeCheckpoint(&v2, &old); err != nil {
		t.Fatal(err)
	}
	resumed := runRounds(t, cfg, 0)
	if err := resumed.ReadCheckpoint(bytes.NewReader(v2.Bytes())); err != nil {
		t.Fatal(err)
	}
	steps(t, resumed, n-m)
	if !bitwiseEqual(resumed.Model().Params(), runRounds(t, cfg, n).Model().Params()) {
		t.Fatal("a version-2 checkpoint did not resume bit for bit")
	}
	for _, c := range []Config{adam, func() Config { c := cfg; c.EMA = 0.9; return c }()} {
		err := runRounds(t, c, 0).ReadCheckpoint(bytes.NewReader(v2.Bytes()))
		if err == nil || !strings.Contains(err.Error(), "version 2") || !strings.Contains(err.Error(), "--optimizer sgd and --ema 0") {
			t.Errorf("version-2 checkpoint into %s, ema %g: error %v", c.Optimizer, c.EMA, err)
		}
	}
}

// TestRecordEMAAndPaperEpsilon: with EMA the records carry the averaged
// model's accuracy and loss beside the raw ones; every private record
// carries epsilon_neurips21, NeurIPS'21 Thm 1 composed over the rounds
// (route.Epsilon of the round event, bound neurips21-upper: what `account`
// computes), never below epsilon.
func TestRecordEMAAndPaperEpsilon(t *testing.T) {
	for _, ema := range []float64{0, 0.8} {
		cfg := baseConfig(t)
		cfg.Randomizer, cfg.Eps0, cfg.Clip, cfg.EMA, cfg.Epochs = RandomizerRInf, 2, 0.5, ema, 2
		cfg.Optimizer = server.Optimizer{Name: server.OptimizerMomentum, Momentum: 0.5}
		tr, err := New(cfg, newLogReg(t, 10, 4), blobs(cfg.Clients, 10, 4, 1, 1), blobs(300, 10, 4, 1, 2))
		if err != nil {
			t.Fatal(err)
		}
		var recs []metrics.Record
		if _, err := tr.Run(context.Background(), Hooks{OnEval: func(r metrics.Record) error { recs = append(recs, r); return nil }}); err != nil {
			t.Fatal(err)
		}
		if len(recs) != 3 {
			t.Fatalf("%d records, want 3", len(recs))
		}
		for _, r := range recs {
			if (r.TestAccuracyEMA != nil) != (ema > 0) || (r.TestLossEMA != nil) != (ema > 0) || r.TestAccuracy == nil {
				t.Fatalf("ema %g, round %d: accuracy %v, averaged %v", ema, r.Round, r.TestAccuracy, r.TestAccuracyEMA)
			}
			if r.EMA != ema || r.Optimizer != "momentum(0.5)" {
				t.Errorf("record says optimizer %q, ema %g", r.Optimizer, r.EMA)
			}
			want := 0.0
			if r.Round > 0 {
				g, err := route.Epsilon([]event.Composed{{Event: cfg.RoundEvent(), Count: int64(r.Round)}}, accounting.BoundNeurIPS21Upper, cfg.Delta, nil)
				if err != nil {
					t.Fatal(err)
				}
				want = g.Epsilon
			}
			if r.EpsilonNeurIPS21 == nil || *r.EpsilonNeurIPS21 != want || *r.EpsilonNeurIPS21 < *r.Epsilon {
				t.Errorf("round %d: epsilon_neurips21 %v, want %g (epsilon %g)", r.Round, r.EpsilonNeurIPS21, want, *r.Epsilon)
			}
		}
		if ema > 0 && *recs[2].TestLossEMA == *recs[2].TestLoss {
			t.Error("the averaged model has exactly the raw model's loss")
		}
	}
	tr := runRounds(t, baseConfig(t), 0) // randomizer none: no epsilon of either kind
	var rec metrics.Record
	tr.Run(context.Background(), Hooks{OnEval: func(r metrics.Record) error { rec = r; return nil }})
	if rec.Epsilon != nil || rec.EpsilonNeurIPS21 != nil {
		t.Errorf("non-private run: epsilon %v, epsilon_neurips21 %v", rec.Epsilon, rec.EpsilonNeurIPS21)
	}
}

// FuzzParseLRDecay: any spec either fails naming lr-decay or parses to a
// decay that round-trips through String and whose factor is in [0, 1]
// (and finite) at every epoch.
func FuzzParseLRDecay(f *testing.F) {
	for _, s := range []string{"none", "cosine:200", "cosine:200:0.01", "step:50:0.5", "step:1:1", "cosine:1e-300", "cosine:1e300:0.5"} {
		f.Add(s, 12.5)
	}
	f.Fuzz(func(t *testing.T, spec string, epoch float64) {
		d, err := ParseLRDecay(spec)
		if err != nil {
			if !strings.Contains(err.Error(), "lr-decay") {
				t.Fatalf("ParseLRDecay(%q): error %v does not name lr-decay", spec, err)
			}
			return
		}
		back, err := ParseLRDecay(d.String())
		if err != nil || back != d {
			t.Fatalf("round trip of %q: %+v (%v), want %+v", spec, back, err, d)
		}
		if math.IsNaN(epoch) || math.IsInf(epoch, 0) || epoch < 0 || epoch > 1e9 {
			return
		}
		if v := d.Factor(epoch); !(v >= 0 && v <= 1) {
			t.Fatalf("%q at epoch %g: factor %g", spec, epoch, v)
		}
	})
}
