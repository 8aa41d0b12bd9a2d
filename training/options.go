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
// train`, `up` and `server` take them: each field's flag, default and help
// text are its struct tags (bound by cliflag.Bind; the defaults of a
// server optimizer, an LR decay and a participation are
// server.OptimizerSGD, DecayNone and ParticipationSample, checked by a
// test); Config turns them into a validated Config. Where the run is
// kept (--state, --metrics) is not an option of the run.
type Options struct {
	Dataset       string  `flag:"dataset" default:"mnist" usage:"dataset: mnist (IDX files in --data-dir), or synthetic (random data of MNIST shape, for throughput measurements)"`
	DataDir       string  `flag:"data-dir" metavar:"DIR" usage:"DIR holding the dataset (for mnist: shuffledp data fetch mnist fills data/mnist-cache)"` // usage computed: FlagUsage
	Model         string  `flag:"model" default:"cnn" usage:"model: cnn (NeurIPS'21 Table 1: ReLU, 32 filters in conv2), cnn-tanh (the authors' network: tanh, 16 filters, d = 13,706), mlp, logreg or logreg-dct (logreg in a DCT basis of the sum-zero logits: same classifiers, the residual spread over classes-1 rows, d = (classes-1)(inputs+1))"`
	Clients       int     `flag:"clients" default:"60000" usage:"n: number of clients, each holding --examples-per-client training examples (the first n*M, dealt by --partition; by default client i holds example i)"`
	Sample        int     `flag:"sample" default:"10000" usage:"k: clients sampled without replacement per round"`
	Randomizer    string  `flag:"randomizer" default:"rinf" usage:"local randomizer: none (non-private baseline), rinf, r1, r2, privunit (the R_2 arXiv Fig. 5(b) names), djw (Duchi-Jordan-Wainwright l2, the R_2 of the authors' code), gaussian (each client adds N(0, C^2 sigma^2 I): DP-SGD in the shuffle model) or central-gaussian (the central-DP baseline; see Gaussian runs below)"`
	ClipNorm      string  `flag:"clip-norm" usage:"clipping norm l1, l2 or linf (default: linf for rinf, l1 for r1, l2 for r2 and none)"`
	LinfClip      string  `flag:"linf-clip" default:"scale" usage:"with --clip-norm linf: scale (Algorithm 1: g / max(1, ||g||_inf/C)) or clamp (each coordinate into [-C, C])"`
	Clip          float64 `flag:"clip" default:"0.01" usage:"clipping radius C: g <- g / max(1, ||g||_p / C)"`
	Eps0          float64 `flag:"eps0" default:"1.5" usage:"local DP parameter of the randomizer"`
	Delta         float64 `flag:"delta" default:"1e-5" usage:"delta of the reported (epsilon, delta)-DP guarantee (account's default is 1e-8: pass it --delta 1e-5 to compare)"`
	Epochs        float64 `flag:"epochs" default:"200" usage:"epochs to train (an epoch is clients/sample rounds; fractions allowed)"`
	LR            string  `flag:"lr" default:"0.3,70:0.18" usage:"learning-rate schedule: RATE[,EPOCH:RATE...], e.g. 0.3,70:0.18"`
	Seed          uint64  `flag:"seed" default:"1" usage:"seed of every random choice (simulation only)"`
	TargetEpsilon float64 `flag:"target-epsilon" usage:"stop before the round that would make epsilon exceed this (0 = no target)"`
	Bound         string  `flag:"bound" default:"best" usage:"the run's bound, recorded in its ledger: best (the smallest over every proven route: RDP, approximate DP, PLD) or best-conjecture (opt-in: also the conjectured shuffle Gaussian bounds, ICLR'23 Thm 1/Thm 2/eq. 11/eq. 13; every epsilon they attain is labelled CONJECTURE)"`
	EvalEvery     int     `flag:"eval-every" usage:"evaluate every this many rounds (0 = once per epoch)"`
	ProjectRadius float64 `flag:"project-radius" usage:"project the parameters onto the l2 ball of this radius after every step (0 = no projection)"`
	Workers       int     `flag:"workers" usage:"goroutines computing client gradients (0 = GOMAXPROCS; results do not depend on it)"`
	CryptoNoise   bool    `flag:"crypto-noise" usage:"draw client randomizer noise from crypto/rand (not reproducible)"`
	// ClipDiagnostic is simulation only.
	ClipDiagnostic bool    `flag:"clip-diagnostic" usage:"SIMULATION ONLY: at every evaluation measure the clip's bias on the training clients' clear gradients (metrics clip_bias: clipped fraction, cosine and norms of the mean clipped against the mean gradient, R_inf's noise); changes no step; refused by networked runs"`
	TestSize       int     `flag:"test-size" usage:"evaluate on the first this many test examples (0 = all)"`
	Validation     int     `flag:"validation" usage:"tune honestly: hold out this many training examples (a fixed random split), train on the rest and evaluate on them instead of the test set, which is then never evaluated; metrics say eval_set \"validation\" (0 = off)"`
	Optimizer      string  `flag:"optimizer" default:"sgd" usage:"server optimizer (privacy-free post-processing): sgd (Algorithm 1), momentum (heavy ball: v = mu v + g, step lr v), nesterov (step lr (g + mu v)) or adam"`
	Momentum       float64 `flag:"momentum" default:"0.9" usage:"mu of --optimizer momentum and nesterov, in [0, 1)"`
	AdamBetas      string  `flag:"adam-betas" default:"0.9,0.999" metavar:"B1,B2" usage:"B1,B2 of --optimizer adam, each in [0, 1)"`
	AdamEps        float64 `flag:"adam-eps" default:"1e-8" usage:"epsilon of --optimizer adam (added to the root of the second moment), > 0"`
	EMA            float64 `flag:"ema" metavar:"DECAY" usage:"DECAY in [0, 1) of an exponential moving average of the parameters (debiased), evaluated beside them (test_accuracy_ema); 0 = off"`
	LRWarmup       float64 `flag:"lr-warmup" metavar:"EPOCHS" usage:"linear learning-rate warm-up over the first this many EPOCHS (fractions allowed; 0 = none)"`
	LRDecay        string  `flag:"lr-decay" default:"none" usage:"learning-rate decay on top of --lr: none, cosine:END[:MIN] (to MIN times the rate at epoch END) or step:EVERY:GAMMA (times GAMMA every EVERY epochs)"`
	Features       string  `flag:"features" default:"none" usage:"fixed per-example feature extractor applied on each client before its gradient (no privacy cost; cached in DATA-DIR/features): none, scatter (ScatterNet J=2 L=8, 2x2 pooling, group norm over 3 channels: 324 features) or scatter:j=J,l=L,pool=P,norm=none|unit|group,groups=G; use with --model logreg or mlp"`
	// ExamplesPerClient, Partition, LocalSteps and LocalLR are the
	// clients' data and local training (Config's fields of those names).
	ExamplesPerClient int     `flag:"examples-per-client" default:"1" metavar:"M" usage:"M: training examples each client holds (the population is the first clients*M, dealt by --partition); with M > 1 or --local-steps > 1, epsilon is for one client's whole data"`
	Partition         string  `flag:"partition" default:"index" usage:"how the population is dealt to the clients, seeded by --seed: index (client i holds examples iM..iM+M-1; at M = 1 example i), iid (a seeded permutation cut into clients of M), dirichlet:ALPHA (label skew: each client's class proportions from Dirichlet(ALPHA)), shards:S (McMahan et al. 2017: sorted by label, cut into clients*S shards of M/S examples, S shards a client)"`
	LocalSteps        int     `flag:"local-steps" default:"1" metavar:"E" usage:"E: full-batch gradient steps a client takes on its own examples; it reports (w_0 - w_E)/(E * local-lr), clipped as a whole and randomized as one gradient (E = 1: the mean gradient of its examples)"`
	LocalLR           float64 `flag:"local-lr" usage:"step size of the local steps, with --local-steps > 1 (0 = the first rate of --lr)"`
	Gaussian          GaussianOptions
}

// FlagUsage implements cliflag.Usager: --data-dir names data.DefaultMNISTDir.
func (*Options) FlagUsage(name string) string {
	if name == "data-dir" {
		return "DIR holding the dataset (for mnist: shuffledp data fetch mnist fills " + data.DefaultMNISTDir + ")"
	}
	return ""
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
		TargetEpsilon: o.TargetEpsilon, Bound: o.Bound, EvalEvery: o.EvalEvery, ProjectRadius: o.ProjectRadius,
		Workers: o.Workers, CryptoNoise: o.CryptoNoise, ClipDiagnostic: o.ClipDiagnostic,
		Command: command,
	}
	if o.Validation > 0 {
		cfg.EvalSet = "validation"
	}
	if cfg.Partition, err = data.ParsePartition(o.Partition); err != nil {
		return Config{}, err
	}
	cfg.ExamplesPerClient, cfg.LocalSteps, cfg.LocalLR = o.ExamplesPerClient, o.LocalSteps, o.LocalLR
	// 0 is Config's default (1) for Options built in code; on a command
	// line it is a bad value.
	if o.ExamplesPerClient < 0 || (o.ExamplesPerClient == 0 && given("examples-per-client")) {
		return Config{}, fmt.Errorf("examples-per-client must be >= 1, got %d", o.ExamplesPerClient)
	}
	if o.LocalSteps < 0 || (o.LocalSteps == 0 && given("local-steps")) {
		return Config{}, fmt.Errorf("local-steps must be >= 1, got %d", o.LocalSteps)
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
	if have := data.MNISTTrainSize - max(o.Validation, 0); o.Dataset == "mnist" && cfg.ExamplesPerClient > 1 && cfg.Population() > have {
		return Config{}, fmt.Errorf("clients * examples-per-client = %d * %d exceeds the %d MNIST training examples: lower --clients or --examples-per-client",
			cfg.Clients, cfg.ExamplesPerClient, have)
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
	s := data.Spec{Name: o.Dataset, Dir: o.DataDir, Clients: o.Clients, ExamplesPerClient: o.ExamplesPerClient, Validation: o.Validation, TestSize: o.TestSize, Seed: o.Seed}
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
	"shards": true, "examples-per-client": true, "partition": true, "local-steps": true, "local-lr": true,
	"bound": true}

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

// Identity returns the run's identity in its state directory from its
// command line: flags holds every flag (set or default) as name → value,
// without those that only say where or how the run is kept (--state,
// --preset: the values a preset set are in flags); atDefault reports
// whether a flag holds its default. A LaterFlags flag at its default is
// left out, and the adjacency is in it exactly when IdentityAdjacency
// says so.
func (c Config) Identity(flags map[string]string, atDefault func(name string) bool) map[string]string {
	m := map[string]string{}
	for name, v := range flags {
		if name == "adjacency" || (LaterFlags[name] && atDefault(name)) {
			continue
		}
		m[name] = v
	}
	if adj, ok := c.IdentityAdjacency(); ok {
		m["adjacency"] = adj
	}
	return m
}
