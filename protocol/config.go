package protocol

import (
	"errors"
	"fmt"
	"math"

	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/randomizer"
)

// Clipping norms of RunConfig.ClipNorm.
const (
	NormL1   = "l1"
	NormL2   = "l2"
	NormLInf = "linf"
)

// RandomizerNone names the non-private baseline in RunConfig.Randomizer:
// clients send clipped gradients in the clear, nothing is shuffled and no
// privacy is claimed.
const RandomizerNone = "none"

// RunConfig is the public configuration of one run, fixed for its whole
// life: everything a client needs to compute its report, the shuffler
// needs to sample and check a batch (and to price it), and the server
// needs to decode it. None of it is secret.
type RunConfig struct {
	// Run identifies the run; sealed reports and ledger entries are bound
	// to (Run, round id).
	Run string
	// Model names the architecture (model.New), Dim its number of
	// parameters d.
	Model string
	Dim   int
	// Randomizer is the eps0-LDP local randomizer (randomizer.New names:
	// rinf, r1, r2, privunit, ...), or RandomizerNone.
	Randomizer string
	// ClipNorm (l1, l2, linf) and Clip (the radius C) define the clipping
	// g <- g / max(1, ||g||_p / C) of NeurIPS'21 Algorithm 1, line 6;
	// ClampLinf, with linf, clamps every coordinate into [-C, C] instead.
	ClipNorm  string
	Clip      float64
	ClampLinf bool
	// Eps0 is the local privacy parameter of the randomizer.
	Eps0 float64
	// Population is n, the number of clients; PerRound is k, the number
	// sampled without replacement in every round (flags clients and
	// sample). Both are public counts.
	Population int
	PerRound   int
	// MinBatch is the smallest batch the shuffler releases (1 <= MinBatch
	// <= PerRound).
	MinBatch int
	// ReportBytes is the length of every sealed report of the run (the
	// randomizer's report size plus the sealing overhead); the shuffler
	// refuses any other length. 0 for RandomizerNone.
	ReportBytes int
	// Sigma is the noise multiplier of the Gaussian randomizer
	// (RandomizerGaussian: each client adds N(0, Clip^2 Sigma^2 I_d));
	// 0 for the others. Eps0 is not used with it.
	Sigma float64
	// Participation says who decides which clients report in a round:
	// ParticipationSample (the zero value: the shuffler samples PerRound
	// of Population) or ParticipationCheckIn (every client decides with
	// its own randomness, with probability Rate; the batch size is
	// random, PerRound is only its expected value rounded, for the
	// learning-rate schedule).
	Participation string
	// Rate is the check-in probability gamma of ParticipationCheckIn, in
	// (0, 1]; 0 otherwise.
	Rate float64
	// Adjacency is the neighbouring relation the shuffler's ledger debits
	// RandomizerGaussian rounds for (event.Event.Adjacency: replace-one or
	// zero-out); empty for the others.
	Adjacency string
	// LocalSteps is E, the number of local full-batch gradient steps of a
	// client's update on its own examples, and LocalLR their step size
	// (train --local-steps, --local-lr): the client reports the
	// pseudo-gradient (w_0 - w_E)/(E LocalLR), clipped as a whole
	// (client.Client). 0 or 1 is one step, the mean gradient of its
	// examples, and LocalLR is then 0 (unused); the accounting does not
	// depend on either (one client's whole update is what a neighbouring
	// data set changes).
	LocalSteps int
	LocalLR    float64
}

// RandomizerGaussian names the Gaussian local randomizer of shuffle
// Gaussian SGD (ICLR'23 submission; randomizer.Gaussian): not eps0-LDP,
// accounted from RunConfig.Sigma.
const RandomizerGaussian = "gaussian"

// Participation modes of RunConfig.Participation.
const (
	// ParticipationSample: the shuffler samples PerRound clients of
	// Population without replacement (NeurIPS'21 Algorithm 1, line 3).
	ParticipationSample = ""
	// ParticipationCheckIn: shuffled check-in (Liew et al. 2022; ICLR'23
	// submission Sec. 4.2): each client checks in with probability Rate,
	// deciding with its own randomness; the shuffler samples nobody.
	ParticipationCheckIn = "checkin"
)

// Round is the public configuration of a round of the run that released a
// batch of reports reports, which event.RoundEvent turns into the privacy
// event the shuffler debits.
func (c RunConfig) Round(reports int) event.Round {
	return event.Round{Randomizer: c.Randomizer, Participation: c.Participation, N: int64(c.Population),
		Reports: int64(reports), Eps0: c.Eps0, Sigma: c.Sigma, Rate: c.Rate, Adjacency: c.Adjacency}
}

// Validate returns an error naming the first invalid field (flag-style
// names: run, model, dim, randomizer, clip-norm, clip, eps0, clients,
// sample, min-batch, report-bytes).
func (c RunConfig) Validate() error {
	switch {
	case c.Run == "":
		return errors.New("run: the run id must not be empty")
	case c.Model == "":
		return errors.New("model: the architecture name must not be empty")
	case c.Dim < 1:
		return fmt.Errorf("dim must be >= 1, got %d", c.Dim)
	case c.Randomizer == "":
		return errors.New("randomizer must not be empty")
	case c.ClipNorm != NormL1 && c.ClipNorm != NormL2 && c.ClipNorm != NormLInf:
		return fmt.Errorf("clip-norm must be one of l1, l2, linf, got %q", c.ClipNorm)
	case c.ClampLinf && c.ClipNorm != NormLInf:
		return fmt.Errorf("linf-clip clamp needs clip-norm linf, got %s", c.ClipNorm)
	case !(c.Clip > 0) || math.IsInf(c.Clip, 0):
		return fmt.Errorf("clip must be positive and finite, got %g", c.Clip)
	case c.Randomizer != RandomizerNone && c.Randomizer != RandomizerGaussian && (!(c.Eps0 > 0) || math.IsInf(c.Eps0, 0)):
		return fmt.Errorf("eps0 must be positive and finite, got %g", c.Eps0)
	case c.Randomizer == RandomizerGaussian && (!(c.Sigma > 0) || math.IsInf(c.Sigma, 0)):
		return fmt.Errorf("sigma must be positive and finite, got %g", c.Sigma)
	case c.Randomizer != RandomizerGaussian && c.Sigma != 0:
		return fmt.Errorf("sigma is used by randomizer gaussian only, got %g with randomizer %s", c.Sigma, c.Randomizer)
	case c.Participation != ParticipationSample && c.Participation != ParticipationCheckIn:
		return fmt.Errorf("participation must be sample (\"\") or checkin, got %q", c.Participation)
	case c.Participation == ParticipationCheckIn && !(c.Rate > 0 && c.Rate <= 1):
		return fmt.Errorf("rate must be in (0, 1] with participation checkin, got %g", c.Rate)
	case c.Participation != ParticipationCheckIn && c.Rate != 0:
		return fmt.Errorf("rate is used by participation checkin only, got %g", c.Rate)
	case c.Population < 1:
		return fmt.Errorf("clients must be >= 1, got %d", c.Population)
	case c.PerRound < 1 || c.PerRound > c.Population:
		return fmt.Errorf("sample must be in [1, clients=%d], got %d", c.Population, c.PerRound)
	case c.MinBatch < 1 || c.MinBatch > c.PerRound:
		return fmt.Errorf("min-batch must be in [1, sample=%d], got %d", c.PerRound, c.MinBatch)
	case c.Randomizer != RandomizerNone && c.ReportBytes < 1:
		return fmt.Errorf("report-bytes must be >= 1, got %d", c.ReportBytes)
	case c.LocalSteps < 0 || c.LocalSteps > MaxLocalSteps:
		return fmt.Errorf("local-steps must be in [1, %d], got %d", MaxLocalSteps, c.LocalSteps)
	case c.LocalSteps > 1 && (!(c.LocalLR > 0) || math.IsInf(c.LocalLR, 0)):
		return fmt.Errorf("local-lr must be positive and finite with local-steps %d, got %g", c.LocalSteps, c.LocalLR)
	case c.LocalSteps <= 1 && c.LocalLR != 0:
		return fmt.Errorf("local-lr is used with local-steps > 1 only, got %g", c.LocalLR)
	}
	return nil
}

// MaxLocalSteps bounds RunConfig.LocalSteps (a client's work per round).
const MaxLocalSteps = 10_000

// NewRandomizer returns the run's local randomizer R_p (cfg.Randomizer, on
// the ball of radius cfg.Clip in R^d with parameter cfg.Eps0): clients
// randomize with it, the server decodes with it.
func NewRandomizer(cfg RunConfig) (randomizer.Randomizer, error) {
	if cfg.Randomizer == RandomizerNone {
		return nil, errors.New("randomizer none has no randomizer")
	}
	r, err := randomizer.New(cfg.Randomizer, randomizer.Config{Eps0: cfg.Eps0, Dim: cfg.Dim, Radius: cfg.Clip, Sigma: cfg.Sigma})
	if err != nil {
		return nil, fmt.Errorf("randomizer %s: %w", cfg.Randomizer, err)
	}
	return r, nil
}
