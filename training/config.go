package training

import (
	"fmt"
	"math"
	"runtime"

	"github.com/shuffledp/shuffledp/accounting"
	"github.com/shuffledp/shuffledp/data"
	"github.com/shuffledp/shuffledp/protocol"
	"github.com/shuffledp/shuffledp/route"
	"github.com/shuffledp/shuffledp/server"
)

// Randomizer names accepted by Config.Randomizer.
const (
	// RandomizerNone is the non-private baseline: clipped gradients are
	// averaged without noise and no privacy is claimed (epsilon is null).
	RandomizerNone = protocol.RandomizerNone
	// RandomizerRInf is R_inf of Girgis et al. (AISTATS'21) on the l_inf
	// ball: one coordinate, one sign, log2(d)+1 bits.
	RandomizerRInf = "rinf"
	// RandomizerR1 is R_1 of Girgis et al. on the l_1 ball (Hadamard
	// basis), log2(d)+1 bits.
	RandomizerR1 = "r1"
	// RandomizerR2 is R_2 = Quan∘Priv of Girgis et al. on the l_2 ball.
	RandomizerR2 = "r2"
	// RandomizerPrivUnit is PrivUnit2 (Bhowmick et al. 2018) on the l_2
	// ball, the R_2 that arXiv Fig. 5(b) (NeurIPS'21 supplement Fig. 6) names ("R_2 ... (PrivUnit)");
	// its reports are d float64s, with far smaller variance than
	// Quan∘Priv's one-coordinate reports.
	RandomizerPrivUnit = "privunit"
	// RandomizerDJW is the l_2 mechanism of Duchi, Jordan and Wainwright
	// (FOCS'13): a random point of the sphere of radius M in the
	// hemisphere picked by a biased coin; the R_2 of the authors' code for
	// NeurIPS'21 Fig. 6 (randomizer.DJW).
	RandomizerDJW = "djw"
)

// Clipping norms accepted by Config.ClipNorm.
const (
	NormL1   = protocol.NormL1
	NormL2   = protocol.NormL2
	NormLInf = protocol.NormLInf
)

// DefaultClipNorm returns the norm each randomizer's input domain is a ball
// of: l_inf for R_inf, l_1 for R_1, l_2 for R_2 (and for the non-private
// baseline, which has no domain, l_2).
func DefaultClipNorm(randomizer string) string {
	switch randomizer {
	case RandomizerRInf:
		return NormLInf
	case RandomizerR1:
		return NormL1
	default:
		return NormL2
	}
}

// normRank orders the norms by the size of their unit balls:
// B_1 ⊂ B_2 ⊂ B_inf.
func normRank(norm string) int {
	switch norm {
	case NormL1:
		return 1
	case NormL2:
		return 2
	default:
		return 3
	}
}

// Config holds the parameters of one CLDP-SGD run (NeurIPS'21 Algorithm 1).
// Field comments name the command-line flag each one comes from.
type Config struct {
	// Clients is n, the number of clients (--clients), each holding
	// ExamplesPerClient training examples: the first n*M examples of the
	// training set are the clients' data, dealt by Partition.
	Clients int
	// ExamplesPerClient is M, the number of training examples a client
	// holds (--examples-per-client; 0 means 1), Partition how the
	// population is dealt (--partition; the zero value is
	// data.PartitionIndex: client i holds examples iM..iM+M-1, at M = 1
	// example i), seeded by Seed. LocalSteps is E, the local full-batch
	// steps of a client's update (--local-steps; 0 means 1), LocalLR
	// their step size (--local-lr; 0 means the first rate of LR; set by
	// Validate when E > 1, 0 otherwise). clientdata.go.
	ExamplesPerClient int
	Partition         data.Partition
	LocalSteps        int
	LocalLR           float64
	// Sample is k, the number of clients sampled without replacement in
	// every round (--sample).
	Sample int
	// Randomizer is one of none, rinf, r1, r2, privunit, djw (--randomizer).
	Randomizer string
	// ClipNorm is l1, l2 or linf (--clip-norm); empty means
	// DefaultClipNorm(Randomizer).
	ClipNorm string
	// Clip is the clipping radius C (--clip): g <- g / max(1, ||g||_p / C).
	Clip float64
	// ClampLinf, with ClipNorm linf, clamps every coordinate into [-C, C]
	// (the Euclidean projection onto the l_inf ball, randomizer.ClipLinf)
	// instead of scaling the whole vector by max(1, ||g||_inf / C) as
	// Algorithm 1, line 6 states (--linf-clip clamp). Both put the gradient
	// in R_inf's input domain, so privacy is the same; clamping keeps more
	// of the small coordinates.
	ClampLinf bool
	// Eps0 is the local privacy parameter of the randomizer (--eps0); 0
	// (unused) for the Gaussian randomizers, which take Sigma.
	Eps0 float64
	// Sigma is the noise multiplier of randomizer gaussian (each client
	// adds N(0, C^2 Sigma^2 I_d)) and central-gaussian (the server adds
	// N(0, C^2 Sigma^2 I_d) to the sum) (--sigma); 0 for the others.
	Sigma float64
	// Participation is who decides which clients report in a round
	// (--participation): ParticipationSample ("" or "sample": k of n
	// sampled without replacement; Poisson sampling at Rate for
	// central-gaussian) or ParticipationCheckIn (each client checks in
	// with probability Rate, deciding with its own randomness).
	Participation string
	// Rate is the check-in probability gamma (--rate) of
	// ParticipationCheckIn, or the Poisson sampling rate q of
	// central-gaussian (0 there means Sample/Clients). With a rate, Sample
	// is set to the expected batch size max(1, round(Rate*Clients)), which
	// defines the epoch (Clients/Sample rounds) and the schedule.
	Rate float64
	// NoiseSum simulates randomizer gaussian with one summed noise vector
	// N(0, m C^2 Sigma^2 I_d) per round instead of m per-client vectors
	// (--noise-sum; SIMULATION ONLY, see noisesum.go for the proof of
	// equivalence and what it does not simulate).
	NoiseSum bool
	// Adjacency is the neighbouring relation the Gaussian runs' epsilon is
	// for (--adjacency; event.Event.Adjacency): event.AdjacencyReplaceOne
	// (one client's gradient replaced by any other, the curves at sigma/2)
	// or event.AdjacencyZeroOut (replaced by zero, the ICLR'23 paper's
	// convention) for randomizer gaussian; event.AdjacencyAddRemove or
	// zero-out for central-gaussian (replace-one is refused there). Empty
	// means the default, set by Validate: replace-one for gaussian,
	// add-remove for central-gaussian. The eps0-LDP randomizers are
	// replace-one natively: "" or replace-one, and their events carry none.
	Adjacency string
	// Delta is the delta at which epsilon is reported (--delta).
	Delta float64
	// Epochs is the number of passes, an epoch being n/k rounds
	// (--epochs); fractional values are allowed. The run has
	// ceil(Epochs*n/k) rounds.
	Epochs float64
	// LR is the learning-rate schedule (--lr).
	LR LRSchedule
	// LRWarmup is the length in epochs of a linear learning-rate warm-up
	// (--lr-warmup); 0 means none. See Schedule.
	LRWarmup float64
	// LRDecay multiplies the learning rate by a decay factor (--lr-decay);
	// the zero value is none.
	LRDecay LRDecay
	// Optimizer is the server's optimizer (--optimizer, --momentum,
	// --adam-betas, --adam-eps); the zero value is SGD, Algorithm 1.
	// Like LRWarmup, LRDecay and EMA it post-processes the released
	// average and leaves the privacy accounting unchanged.
	Optimizer server.Optimizer
	// EMA, if positive, is the decay of an exponential moving average of
	// the parameters that is evaluated beside them (--ema); 0 means none.
	EMA float64
	// Seed seeds every random choice of the simulation (--seed): client
	// sampling, randomizer noise and the shuffler's permutation.
	Seed uint64
	// TargetEpsilon, if positive, stops training before the first round
	// whose composition would make epsilon exceed it (--target-epsilon).
	TargetEpsilon float64
	// Bound is the run's bound (--bound), recorded in its ledger
	// (ledger.Options.Bound): "" or "best", or the opt-in
	// route.BoundBestConjecture.
	Bound string
	// EvalEvery is the evaluation period in rounds (--eval-every); 0 means
	// once per epoch.
	EvalEvery int
	// ProjectRadius, if positive, projects the parameters onto the l_2 ball
	// of that radius after every step (the projection Pi_C of Algorithm 1,
	// line 11); 0 means no projection (C = R^d).
	ProjectRadius float64
	// CryptoNoise draws the clients' randomizer noise from crypto/rand
	// (--crypto-noise), as a deployment must; the run is then not
	// reproducible. Client sampling and the shuffler's permutation still
	// come from the seeded generator.
	CryptoNoise bool
	// ClipDiagnostic measures the clip's bias on the training clients at
	// every evaluation (--clip-diagnostic; metrics.ClipBias,
	// MeasureClipBias). SIMULATION ONLY: it reads every client's clear
	// gradient; a networked run refuses it. It changes no step of the run.
	ClipDiagnostic bool
	// Command is the command line that started the run, copied into every
	// metrics record so that a result can be re-run from its own file.
	Command []string
	// EvalSet names what the evaluations measure, copied into every metrics
	// record: "" or "test" for the test set, "validation" for a split held
	// out of the training examples (train --validation) when tuning.
	EvalSet string
	// Workers is the number of goroutines computing per-client gradients;
	// 0 means GOMAXPROCS. The result does not depend on it.
	Workers int
	// RunID identifies the run: reports are sealed and the budget debited
	// under (RunID, round id). Empty means DefaultRunID.
	RunID string
}

// MaxClients bounds a run's n (2^31 - 1, beyond any population a run has
// enrolled), and MaxRounds the rounds a run may plan (Epochs * n / k),
// so that every count of a run fits an int32 and a mistyped flag is
// refused rather than planned (--clients 9223372036854775807 would plan
// 4.6e16 rounds).
const (
	MaxClients = 1<<31 - 1
	MaxRounds  = 1<<31 - 1
)

// Validate checks every field and returns an error naming the offending
// flag.
func (c *Config) Validate() error {
	if c.Clients < 1 || c.Clients > MaxClients {
		return fmt.Errorf("clients must be in [1, %d], got %d", MaxClients, c.Clients)
	}
	if err := c.validateParticipation(); err != nil { // gaussian.go; sets Sample from Rate
		return err
	}
	if c.Sample < 1 || c.Sample > c.Clients {
		return fmt.Errorf("sample must be in [1, clients=%d], got %d", c.Clients, c.Sample)
	}
	if err := c.validateClientData(); err != nil { // clientdata.go
		return err
	}
	switch c.Randomizer {
	case RandomizerNone, RandomizerRInf, RandomizerR1, RandomizerR2, RandomizerPrivUnit, RandomizerDJW,
		RandomizerGaussian, RandomizerCentralGaussian:
	default:
		return fmt.Errorf("randomizer must be one of none, rinf, r1, r2, privunit, djw, gaussian, central-gaussian, got %q", c.Randomizer)
	}
	if c.ClipNorm == "" {
		c.ClipNorm = DefaultClipNorm(c.Randomizer)
	}
	switch c.ClipNorm {
	case NormL1, NormL2, NormLInf:
	default:
		return fmt.Errorf("clip-norm must be one of l1, l2, linf, got %q", c.ClipNorm)
	}
	// The clipped vector must lie in the randomizer's input domain, the
	// ball of radius C in its norm; since B_1(C) ⊂ B_2(C) ⊂ B_inf(C),
	// clipping in a smaller norm is allowed.
	if c.Randomizer != RandomizerNone && normRank(c.ClipNorm) > normRank(DefaultClipNorm(c.Randomizer)) {
		return fmt.Errorf("clip-norm %s does not keep gradients inside the input domain of randomizer %s (the %s ball of radius clip); use %s",
			c.ClipNorm, c.Randomizer, DefaultClipNorm(c.Randomizer), DefaultClipNorm(c.Randomizer))
	}
	if c.ClampLinf && c.ClipNorm != NormLInf {
		return fmt.Errorf("linf-clip clamp needs clip-norm linf, got %s", c.ClipNorm)
	}
	if !(c.Clip > 0) || math.IsInf(c.Clip, 0) {
		return fmt.Errorf("clip must be positive and finite, got %g", c.Clip)
	}
	if c.Randomizer != RandomizerNone && !c.gaussian() && (!(c.Eps0 > 0) || math.IsInf(c.Eps0, 0)) {
		return fmt.Errorf("eps0 must be positive and finite, got %g", c.Eps0)
	}
	if err := c.validateGaussian(); err != nil { // gaussian.go
		return err
	}
	if !(c.Delta > 0 && c.Delta < 1) {
		return fmt.Errorf("delta must be in (0,1), got %g", c.Delta)
	}
	if !(c.Epochs > 0) || math.IsInf(c.Epochs, 0) {
		return fmt.Errorf("epochs must be positive and finite, got %g", c.Epochs)
	}
	if r := c.Epochs * float64(c.Clients) / float64(c.Sample); r > MaxRounds {
		return fmt.Errorf("epochs: %g epochs of %d clients, %d a round, plan %.4g rounds; a run plans at most %d (fewer epochs, or a larger sample)",
			c.Epochs, c.Clients, c.Sample, math.Ceil(r), MaxRounds)
	}
	if len(c.LR.Rates) == 0 {
		return fmt.Errorf("lr: empty schedule")
	}
	if !(c.LRWarmup >= 0) || math.IsInf(c.LRWarmup, 0) {
		return fmt.Errorf("lr-warmup must be >= 0 and finite (0 = no warm-up), got %g", c.LRWarmup)
	}
	if err := c.LRDecay.Validate(); err != nil {
		return err
	}
	if err := c.Optimizer.Validate(); err != nil {
		return err
	}
	if !(c.EMA >= 0 && c.EMA < 1) {
		return fmt.Errorf("ema must be in [0, 1) (0 = off), got %g", c.EMA)
	}
	if !route.IsBest(c.Bound) {
		return fmt.Errorf("bound must be %s or %s, got %q", accounting.BoundBest, route.BoundBestConjecture, c.Bound)
	}
	if c.TargetEpsilon < 0 || math.IsNaN(c.TargetEpsilon) || math.IsInf(c.TargetEpsilon, 0) {
		return fmt.Errorf("target-epsilon must be >= 0 and finite (0 = no target), got %g", c.TargetEpsilon)
	}
	if c.TargetEpsilon > 0 && c.Randomizer == RandomizerNone {
		return fmt.Errorf("target-epsilon needs a private randomizer; randomizer none has no privacy guarantee")
	}
	if c.EvalEvery < 0 {
		return fmt.Errorf("eval-every must be >= 0 (0 = once per epoch), got %d", c.EvalEvery)
	}
	if c.ProjectRadius < 0 || math.IsNaN(c.ProjectRadius) || math.IsInf(c.ProjectRadius, 0) {
		return fmt.Errorf("project-radius must be >= 0 and finite (0 = no projection), got %g", c.ProjectRadius)
	}
	if c.Workers < 0 {
		return fmt.Errorf("workers must be >= 0 (0 = GOMAXPROCS), got %d", c.Workers)
	}
	if c.Workers == 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	return nil
}

// Schedule returns the learning-rate schedule the server steps with: LR
// with LRWarmup and LRDecay.
func (c *Config) Schedule() Schedule {
	return Schedule{Base: c.LR, Warmup: c.LRWarmup, Decay: c.LRDecay, StepEpochs: float64(c.Sample) / float64(c.Clients)}
}

// TotalRounds is ceil(Epochs * n / k).
func (c *Config) TotalRounds() int {
	return int(math.Ceil(c.Epochs*float64(c.Clients)/float64(c.Sample) - 1e-9))
}

// EpochOf returns the epoch (counted from 0) that round t (counted from 0)
// belongs to: floor(t*k/n).
func (c *Config) EpochOf(t int) int {
	return int(int64(t) * int64(c.Sample) / int64(c.Clients))
}

// EpochsDone returns the number of epochs completed after rounds rounds:
// rounds*k/n.
func (c *Config) EpochsDone(rounds int) float64 {
	return float64(rounds) * float64(c.Sample) / float64(c.Clients)
}
