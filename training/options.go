package training

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/shuffledp/shuffledp/data"
	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/features"
	"github.com/shuffledp/shuffledp/server"
)

// Options are the values of a training run's command line, as `shuffledp
// train`, `up` and `server` take them (each field's flag in its comment's
// first words); Config turns them into a validated Config. Where the run is
// kept (--state, --metrics) is not an option of the run.
type Options struct {
	Dataset, DataDir, Model string  // --dataset, --data-dir, --model
	Clients, Sample         int     // --clients, --sample
	Randomizer, ClipNorm    string  // --randomizer, --clip-norm
	LinfClip                string  // --linf-clip: scale or clamp
	Clip, Eps0, Delta       float64 // --clip, --eps0, --delta
	Epochs                  float64 // --epochs
	LR                      string  // --lr: RATE[,EPOCH:RATE...]
	Seed                    uint64  // --seed
	TargetEpsilon           float64 // --target-epsilon
	EvalEvery               int     // --eval-every
	ProjectRadius           float64 // --project-radius
	Workers                 int     // --workers
	CryptoNoise             bool    // --crypto-noise
	ClipDiagnostic          bool    // --clip-diagnostic (simulation only)
	TestSize, Validation    int     // --test-size, --validation
	Optimizer, AdamBetas    string  // --optimizer, --adam-betas: B1,B2
	Momentum, AdamEps       float64 // --momentum, --adam-eps
	EMA, LRWarmup           float64 // --ema, --lr-warmup
	LRDecay                 string  // --lr-decay
	Features                string  // --features: none or a features.Parse spec
	Gaussian                GaussianOptions
}

// Config returns the validated Config of o. given reports whether a flag
// was given explicitly (by name; parameters of another optimizer or
// randomizer are refused only then); command is the command line that
// reproduces the run (Config.Command). Errors name the flag.
func (o Options) Config(given func(flag string) bool, command []string) (Config, error) {
	sched, err := ParseLRSchedule(o.LR)
	if err != nil {
		return Config{}, err
	}
	decay, err := ParseLRDecay(o.LRDecay)
	if err != nil {
		return Config{}, err
	}
	opt, err := o.ServerOptimizer(given)
	if err != nil {
		return Config{}, err
	}
	if o.LinfClip != "scale" && o.LinfClip != "clamp" {
		return Config{}, fmt.Errorf("linf-clip must be scale or clamp, got %q", o.LinfClip)
	}
	cfg := Config{
		ClampLinf: o.LinfClip == "clamp",
		Clients:   o.Clients, Sample: o.Sample, Randomizer: o.Randomizer, ClipNorm: o.ClipNorm,
		Clip: o.Clip, Eps0: o.Eps0, Delta: o.Delta, Epochs: o.Epochs, LR: sched, Seed: o.Seed,
		LRWarmup: o.LRWarmup, LRDecay: decay, Optimizer: opt, EMA: o.EMA,
		TargetEpsilon: o.TargetEpsilon, EvalEvery: o.EvalEvery, ProjectRadius: o.ProjectRadius,
		Workers: o.Workers, CryptoNoise: o.CryptoNoise, ClipDiagnostic: o.ClipDiagnostic,
		Command: command,
	}
	if o.Validation > 0 {
		cfg.EvalSet = "validation"
	}
	if o.Features != "" && o.Features != "none" {
		if _, err := features.Parse(o.Features, 28, 28); err != nil {
			return Config{}, err
		}
	}
	if err := cfg.ApplyGaussian(o.Gaussian, given); err != nil {
		return Config{}, err
	}
	if err := cfg.Validate(); err != nil { // before loading 400 MB of data
		return Config{}, err
	}
	return cfg, nil
}

// ServerOptimizer returns the server optimizer of o (privacy-free
// post-processing); the parameters of another optimizer (momentum,
// adam-betas, adam-eps) are refused when given explicitly.
func (o Options) ServerOptimizer(given func(flag string) bool) (server.Optimizer, error) {
	opt := server.Optimizer{Name: o.Optimizer}
	switch opt.Kind() {
	case server.OptimizerMomentum, server.OptimizerNesterov:
		opt.Momentum = o.Momentum
	case server.OptimizerAdam:
		b1, b2, ok := strings.Cut(o.AdamBetas, ",")
		var err1, err2 error
		opt.Beta1, err1 = strconv.ParseFloat(strings.TrimSpace(b1), 64)
		opt.Beta2, err2 = strconv.ParseFloat(strings.TrimSpace(b2), 64)
		if !ok || err1 != nil || err2 != nil {
			return opt, fmt.Errorf("adam-betas must be B1,B2 (e.g. 0.9,0.999), got %q", o.AdamBetas)
		}
		opt.Epsilon = o.AdamEps
	}
	if k := opt.Kind(); k != server.OptimizerMomentum && k != server.OptimizerNesterov && given("momentum") {
		return opt, fmt.Errorf("momentum applies to --optimizer momentum or nesterov, not %s", o.Optimizer)
	}
	if opt.Kind() != server.OptimizerAdam && (given("adam-betas") || given("adam-eps")) {
		return opt, fmt.Errorf("adam-betas and adam-eps apply to --optimizer adam, not %s", o.Optimizer)
	}
	return opt, opt.Validate()
}

// DataSpec is the data set o names (data.Load): the first Clients training
// examples, a validation hold-out, the test set cut to TestSize.
//
// With --features, every example (training, validation and test) is mapped
// through the fixed extractor on its own before the split (what each client
// computes on its example; package features explains why this costs no
// privacy), cached in DATA-DIR/features keyed by the SHA-256 of the data and
// of every parameter of the extractor.
func (o Options) DataSpec() data.Spec {
	s := data.Spec{Name: o.Dataset, Dir: o.DataDir, Clients: o.Clients, Validation: o.Validation, TestSize: o.TestSize, Seed: o.Seed}
	if o.Features != "" && o.Features != "none" {
		s.Transform = func(ds *data.Dataset) (*data.Dataset, error) {
			x, err := features.Parse(o.Features, ds.Rows, ds.Cols)
			if err != nil {
				return nil, err
			}
			dir := ""
			if o.DataDir != "" {
				dir = filepath.Join(o.DataDir, "features")
			}
			workers := o.Workers
			if workers <= 0 {
				workers = runtime.GOMAXPROCS(0)
			}
			return x.Cached(ds, dir, workers)
		}
	}
	return s
}

// ResumableFlags are the flags that may change when a run resumes from its
// state directory: they affect neither the privacy accounting nor the
// random stream.
var ResumableFlags = []string{"workers", "no-progress", "eval-every", "epochs", "target-epsilon", "test-size"}

// LaterFlags were added after state directories existed: they are part of
// a run's identity only when they differ from their default, so a run
// started by an earlier build (which has none of them) resumes under the
// defaults, which reproduce it bit for bit.
var LaterFlags = map[string]bool{"optimizer": true, "momentum": true, "adam-betas": true, "adam-eps": true,
	"ema": true, "lr-warmup": true, "lr-decay": true, "features": true,
	"sigma": true, "client-sigma": true, "participation": true, "rate": true, "noise-sum": true,
	"shards": true}

// IdentityAdjacency returns c's adjacency and true when it belongs to the
// run's identity in its state directory: when it differs from the relation
// a run started before adjacency was recorded was accounted for (zero-out;
// add-remove for central-gaussian; replace-one for the eps0-LDP
// randomizers). Such a run resumes with that relation given explicitly,
// and is refused without it, naming --adjacency.
func (c Config) IdentityAdjacency() (string, bool) {
	legacy := (event.Event{Mechanism: c.RoundEvent().Mechanism}).EffectiveAdjacency()
	return c.Adjacency, c.Adjacency != "" && legacy != "" && c.Adjacency != legacy
}
