package training

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/metrics"
	"github.com/shuffledp/shuffledp/protocol"
	"github.com/shuffledp/shuffledp/randomizer"
)

// Gaussian randomizers accepted by Config.Randomizer.
const (
	// RandomizerGaussian is DP-SGD in the shuffle model (ICLR'23
	// submission, Sec. 5.2): every participating client clips its
	// gradient in l_2 to C and adds N(0, C^2 sigma^2 I_d) itself
	// (randomizer.Gaussian); the shuffler permutes the reports; the server
	// averages. Accounted with the subsampled shuffle Gaussian mechanism
	// (k of n) or the shuffled check-in Gaussian mechanism (check-in),
	// the bound "best" of package route.
	RandomizerGaussian = protocol.RandomizerGaussian
	// RandomizerCentralGaussian is central DP-SGD (Abadi et al. 2016), the
	// baseline of the ICLR'23 submission's Fig. 1a: clients are
	// Poisson-sampled at rate q, send their clipped gradients IN THE CLEAR
	// to the server (the central trust model: the server sees raw clipped
	// gradients), which sums them and adds one N(0, C^2 sigma^2 I_d).
	// Accounted with the Poisson-subsampled Gaussian mechanism (Mironov,
	// Talwar, Zhang 2019; event sampled-gaussian). No shuffler takes part.
	RandomizerCentralGaussian = "central-gaussian"
)

// Participation modes of Config.Participation.
const (
	// ParticipationSample: k of n clients sampled without replacement by
	// the shuffler (Poisson sampling at Rate for central-gaussian).
	ParticipationSample = "sample"
	// ParticipationCheckIn: shuffled check-in (Liew et al. 2022; ICLR'23
	// submission Sec. 4.2): every client decides with its own randomness,
	// with probability Rate, whether to take part in a round; neither the
	// shuffler nor the server chooses, and the batch size is random.
	ParticipationCheckIn = "checkin"
)

// maxLogEmptyRound is log(2^-64): a check-in configuration is refused unless
// the probability that no client checks in, (1-rate)^clients, is at most
// 2^-64. See Config.validateParticipation for why.
var maxLogEmptyRound = -64 * math.Ln2

// gaussian reports whether the run's randomizer is one of the Gaussian
// mechanisms (accounted from Sigma, not Eps0).
func (c *Config) gaussian() bool {
	return c.Randomizer == RandomizerGaussian || c.Randomizer == RandomizerCentralGaussian
}

// checkIn reports whether clients check in by themselves.
func (c *Config) checkIn() bool { return c.Participation == ParticipationCheckIn }

// dense reports whether rounds run on the dense path (clipped gradients
// summed over fixed shards, one noise vector per round, no shuffler):
// central-gaussian, and gaussian with NoiseSum.
func (c *Config) dense() bool {
	return c.Randomizer == RandomizerCentralGaussian || (c.Randomizer == RandomizerGaussian && c.NoiseSum)
}

// expectedBatch is max(1, round(rate n)), the expected batch size.
func expectedBatch(rate float64, n int) int {
	return max(1, int(math.Round(rate*float64(n))))
}

// validateParticipation checks Participation and Rate and, when the run
// has a rate, sets Sample to the expected batch size (for the epoch and the
// schedule). Errors name the flag.
//
// Empty check-in rounds. A check-in round in which no client checks in
// releases nothing and is not debited (a ledger entry is a released batch
// of at least one report); the run draws again. Whether a round is empty
// does not depend on any client's data (the decisions are the clients' own
// coins), but repeating until someone checks in conditions every released
// round on K >= 1, K ~ Bin(n, rate), and the conditioned mechanism's RDP
// moment is (E - p0)/(1 - p0) >= E, where E = exp((lambda-1) eps(lambda))
// is the unconditioned moment of eq. (11) (which includes the k = 0 term
// with value 1, package shufflegauss) and p0 = (1-rate)^n. Its RDP thus
// exceeds the ledger's eps(lambda) by at most p0 / ((1-p0)(lambda-1)). We
// refuse configurations with p0 > 2^-64, so that this excess is below
// 2^-64/(lambda-1) per round (at Fig. 1b's n = 60000, rate 0.1, p0 =
// 0.9^60000 ~ 1e-2745: zero in float64). The alternative, debiting the empty
// round, would need a ledger entry for an empty release.
func (c *Config) validateParticipation() error {
	if c.Participation == "" {
		c.Participation = ParticipationSample
	}
	switch c.Participation {
	case ParticipationSample:
		if c.Randomizer == RandomizerCentralGaussian {
			if c.Rate == 0 { // rate k/n
				if c.Sample < 1 || c.Sample > c.Clients {
					return fmt.Errorf("sample must be in [1, clients=%d], got %d", c.Clients, c.Sample)
				}
				c.Rate = float64(c.Sample) / float64(c.Clients)
			}
			if !(c.Rate > 0 && c.Rate <= 1) {
				return fmt.Errorf("rate (Poisson sampling rate of central-gaussian) must be in (0, 1], got %g", c.Rate)
			}
			c.Sample = expectedBatch(c.Rate, c.Clients)
			return nil
		}
		if c.Rate != 0 {
			return fmt.Errorf("rate is used by --participation checkin and --randomizer central-gaussian, not by randomizer %s with participation sample (use --sample)", c.Randomizer)
		}
	case ParticipationCheckIn:
		if c.Randomizer != RandomizerGaussian {
			return fmt.Errorf("participation checkin needs randomizer gaussian (the accountant has the check-in curve of the Gaussian mechanism, checkin-gaussian), got %s", c.Randomizer)
		}
		if !(c.Rate > 0 && c.Rate <= 1) {
			return fmt.Errorf("rate (check-in probability) must be in (0, 1], got %g", c.Rate)
		}
		if lp0 := float64(c.Clients) * math.Log1p(-c.Rate); lp0 > maxLogEmptyRound {
			return fmt.Errorf("rate: the probability that no client checks in, (1-rate)^clients = %.3g, must be <= 2^-64 (raise --rate or --clients); an empty round is not debited, see the documentation", math.Exp(lp0))
		}
		c.Sample = expectedBatch(c.Rate, c.Clients)
	default:
		return fmt.Errorf("participation must be sample or checkin, got %q", c.Participation)
	}
	return nil
}

// validateGaussian checks the Gaussian fields against the randomizer and
// sets the default Adjacency of a Gaussian run.
func (c *Config) validateGaussian() error {
	if !c.gaussian() {
		if c.Adjacency != "" && c.Adjacency != event.AdjacencyReplaceOne {
			return fmt.Errorf("adjacency %s does not apply to randomizer %s: eps0-LDP reports are bounded for replace-one adjacency; omit --adjacency", c.Adjacency, c.Randomizer)
		}
		if c.Sigma != 0 {
			return fmt.Errorf("sigma is used by randomizer gaussian and central-gaussian, not %s (use --eps0)", c.Randomizer)
		}
		if c.NoiseSum {
			return fmt.Errorf("noise-sum needs randomizer gaussian, got %s", c.Randomizer)
		}
		return nil
	}
	if c.Eps0 != 0 {
		return fmt.Errorf("eps0 is not used by randomizer %s (Gaussian noise: use --sigma), got %g", c.Randomizer, c.Eps0)
	}
	if !(c.Sigma >= event.MinSigma) || math.IsInf(c.Sigma, 0) {
		return fmt.Errorf("sigma must be finite and >= %g for randomizer %s, got %g", event.MinSigma, c.Randomizer, c.Sigma)
	}
	if c.NoiseSum && c.Randomizer != RandomizerGaussian {
		return fmt.Errorf("noise-sum simulates the clients' noise of randomizer gaussian; central-gaussian adds one vector anyway")
	}
	switch {
	case c.Adjacency == "":
		c.Adjacency = event.DefaultAdjacency(c.RoundEvent().Mechanism)
	case !slices.Contains(event.Adjacencies(), c.Adjacency):
		return fmt.Errorf("adjacency must be one of %s, got %q", strings.Join(event.Adjacencies(), ", "), c.Adjacency)
	case c.Randomizer == RandomizerCentralGaussian && c.Adjacency == event.AdjacencyReplaceOne:
		return fmt.Errorf("adjacency replace-one is not supported by randomizer central-gaussian: under Poisson sampling MTZ19's curve bounds add-remove and zero-out, not replace-one (see account --help); use %s or %s",
			event.AdjacencyAddRemove, event.AdjacencyZeroOut)
	case c.Randomizer == RandomizerGaussian && c.Adjacency == event.AdjacencyAddRemove:
		return fmt.Errorf("adjacency add-remove does not apply to randomizer gaussian (the shuffle Gaussian bounds are for a fixed population of n clients); use %s or %s",
			event.AdjacencyReplaceOne, event.AdjacencyZeroOut)
	}
	if _, err := event.RoundEvent(c.Round(c.Sample)); err != nil {
		return fmt.Errorf("privacy event: %w", err)
	}
	return nil
}

// gaussianRun fills the Gaussian fields of the run's public configuration.
// A central-gaussian run's roles see randomizer none: clients send their
// clipped gradients in the clear, and the server adds the noise.
func (c *Config) gaussianRun(r protocol.RunConfig) protocol.RunConfig {
	switch c.Randomizer {
	case RandomizerGaussian:
		r.Sigma, r.Eps0, r.Adjacency = c.Sigma, 0, c.Adjacency
		if c.checkIn() {
			r.Participation, r.Rate, r.MinBatch = protocol.ParticipationCheckIn, c.Rate, 1
		}
	case RandomizerCentralGaussian:
		r.Randomizer, r.Eps0 = RandomizerNone, 0
	}
	return r
}

// clientRun is the run configuration the clients compute with: the run's,
// except under NoiseSum, where the simulation takes the clients' clipped
// gradients and adds their summed noise itself (noisesum.go).
func (t *simulation) clientRun() protocol.RunConfig {
	if t.cfg.NoiseSum {
		r := t.run
		r.Randomizer, r.Sigma, r.Participation, r.Rate, r.MinBatch, r.ReportBytes, r.Adjacency = RandomizerNone, 0, "", 0, r.PerRound, 0, ""
		return r
	}
	return t.run
}

// gaussianParams are the Gaussian parameters a checkpoint must match.
// Adjacency is empty for the legacy relation of a checkpoint written before
// the field existed (zero-out for gaussian, add-remove for
// central-gaussian; for the eps0-LDP randomizers, their native
// replace-one), and names the relation otherwise, so that an old run
// resumes only under its own relation.
type gaussianParams struct {
	Sigma         float64
	Participation string
	Rate          float64
	NoiseSum      bool
	Adjacency     string
}

func (c *Config) gaussianParams() gaussianParams {
	p := gaussianParams{Sigma: c.Sigma, Rate: c.Rate, NoiseSum: c.NoiseSum}
	if c.Participation != ParticipationSample {
		p.Participation = c.Participation
	}
	if c.gaussian() && c.Adjacency != (event.Event{Mechanism: c.RoundEvent().Mechanism}).EffectiveAdjacency() {
		p.Adjacency = c.Adjacency
	}
	return p
}

// String formats the parameters for a resume error.
func (p gaussianParams) String() string {
	a := p.Adjacency
	if a == "" {
		a = "the legacy one (zero-out; add-remove for central-gaussian)"
	}
	return fmt.Sprintf("sigma %g, participation %q, rate %g, noise-sum %v, adjacency %s", p.Sigma, p.Participation, p.Rate, p.NoiseSum, a)
}

// batchStats counts the reports and rounds since the last evaluation, for
// the Gaussian runs' mean_batch.
type batchStats struct {
	reports, rounds int64
}

// roundNoise is the central-gaussian server's noise source in simulation:
// it reads whichever source the round set (a ChaCha8 stream keyed by the
// round, or crypto/rand with CryptoNoise).
type roundNoise struct{ src randomizer.Source }

// Uint64 implements randomizer.Source.
func (r *roundNoise) Uint64() uint64 { return r.src.Uint64() }

// gaussianFields adds the Gaussian parameters to a metrics record and
// resets the batch-size statistics.
func (t *Trainer) gaussianFields(rec *metrics.Record) {
	if t.cfg.gaussian() {
		rec.Sigma, rec.Eps0, rec.NoiseSum, rec.Adjacency = t.cfg.Sigma, 0, t.cfg.NoiseSum, t.cfg.Adjacency
		if t.cfg.checkIn() || t.cfg.Randomizer == RandomizerCentralGaussian {
			rec.Participation, rec.Rate = t.cfg.Participation, t.cfg.Rate
			if t.cfg.Randomizer == RandomizerCentralGaussian {
				rec.Participation = "poisson"
			}
			if t.batches.rounds > 0 {
				m := float64(t.batches.reports) / float64(t.batches.rounds)
				rec.MeanBatch = &m
			}
		}
	}
	t.batches = batchStats{}
}

// CentralSigma is the noise multiplier of a central-gaussian run with the
// same total noise as B Gaussian clients of noise multiplier clientSigma
// (the ICLR'23 submission's equal-noise comparison, --client-sigma):
// sqrt(B) clientSigma, where B is the expected batch, rate*clients under a
// rate, sample otherwise. The sum of B independent N(0, C^2 s^2 I) vectors
// is N(0, B C^2 s^2 I).
func CentralSigma(clientSigma float64, clients, sample int, rate float64) (float64, error) {
	if !(clientSigma > 0) || math.IsInf(clientSigma, 0) {
		return 0, fmt.Errorf("client-sigma must be positive and finite, got %g", clientSigma)
	}
	b := float64(sample)
	if rate != 0 {
		b = rate * float64(clients)
	}
	return math.Sqrt(b) * clientSigma, nil
}
