package main

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/shuffledp/shuffledp/training"
)

// trainGaussianFlags are the flags of the Gaussian runs (ICLR'23
// submission, Sec. 5.2): DP-SGD in the shuffle model, shuffled check-in,
// and the central-DP baseline.
type trainGaussianFlags struct {
	sigma, clientSigma, rate float64
	participation, adjacency string
	noiseSum                 bool
}

// trainGaussianHelp is appended to train --help.
const trainGaussianHelp = `

Gaussian runs (ICLR'23 submission "Shuffle Gaussian mechanism", Sec. 5.2):
  --randomizer gaussian --sigma S --clip C   every participating client clips
      in l2 to C and adds N(0, C^2 S^2 I_d) to its gradient; the reports are
      shuffled, the server averages them. Accounted every round with the
      subsampled shuffle Gaussian mechanism (k of n; --sample) or, with
      --participation checkin --rate G, the shuffled check-in Gaussian
      mechanism: each client decides with its own randomness whether to take
      part (probability G), the batch size is random and the server divides
      the sum by the number of reports it received. Epsilon is "best" exactly
      as shuffledp account computes it (it assumes Thm 1's worst-case pair).
      --noise-sum (simulation only) adds one N(0, m C^2 S^2 I_d) vector per
      round for the m reports instead of m per-client vectors: the sum the
      server uses has the same distribution; no per-client report exists.
  --randomizer central-gaussian --sigma S    central DP-SGD, the baseline: the
      server is TRUSTED WITH RAW CLIPPED GRADIENTS, samples clients by Poisson
      sampling at --rate q (default sample/clients), sums their clipped
      gradients and adds one N(0, C^2 S^2 I_d), and steps on the sum / (q n).
      Accounted with the Poisson-subsampled Gaussian mechanism (MTZ19, account
      --mechanism sampled-gaussian). --client-sigma s sets S = sqrt(B) s with
      B = sample (or rate*clients), the total noise of B Gaussian clients with
      noise multiplier s (the paper's equal-noise comparison).
  --eps0 does not apply to either.
  --adjacency names the neighbouring datasets the epsilon is for (recorded in
      every metrics line, the ledger and the checkpoint; a resumed run keeps
      it): replace-one (the default for gaussian: one client's gradient
      replaced by any other, up to 2C apart, so the curves are evaluated at
      sigma/2) or zero-out (replaced by zero: the ICLR'23 paper's convention,
      the curves at sigma) for gaussian; add-remove (the default) or zero-out,
      the same numbers, for central-gaussian, which refuses replace-one (see
      account --help). A run started before --adjacency existed is zero-out
      (add-remove for central-gaussian): resume it with --adjacency zero-out.`

func addTrainGaussianFlags(fl *pflag.FlagSet, g *trainGaussianFlags) {
	fl.Float64Var(&g.sigma, "sigma", 0, "noise multiplier of --randomizer gaussian (each client adds N(0, C^2 sigma^2 I)) or central-gaussian (the server adds it to the sum)")
	fl.Float64Var(&g.clientSigma, "client-sigma", 0, "with --randomizer central-gaussian: sigma = sqrt(B) * client-sigma, B = --sample (or --rate x --clients): the same total noise as B Gaussian clients")
	fl.StringVar(&g.participation, "participation", training.ParticipationSample, "who decides which clients report: sample (k = --sample of n, drawn by the shuffler) or checkin (each client checks in with probability --rate by its own coin; --randomizer gaussian)")
	fl.Float64Var(&g.rate, "rate", 0, "check-in probability of --participation checkin, or the Poisson sampling rate of --randomizer central-gaussian (default sample/clients)")
	fl.StringVar(&g.adjacency, "adjacency", "", "neighbouring datasets the epsilon of --randomizer gaussian or central-gaussian is for: replace-one or zero-out (gaussian; default replace-one), add-remove or zero-out (central-gaussian; default add-remove); see Gaussian runs below")
	fl.BoolVar(&g.noiseSum, "noise-sum", false, "SIMULATION ONLY, --randomizer gaussian: add one summed noise vector N(0, m C^2 sigma^2 I) per round instead of one per client (same distribution of the server's sum; much faster; no per-client reports)")
}

// applyTrainGaussian copies the Gaussian flags into cfg, refusing
// combinations that do not apply (errors name the flag).
func applyTrainGaussian(fs *pflag.FlagSet, g *trainGaussianFlags, cfg *training.Config) error {
	changed := func(name string) bool { return fs.Lookup(name).Changed }
	gaussian := cfg.Randomizer == training.RandomizerGaussian || cfg.Randomizer == training.RandomizerCentralGaussian
	if !gaussian {
		for _, name := range []string{"sigma", "client-sigma", "noise-sum"} {
			if changed(name) {
				return fmt.Errorf("%s applies to --randomizer gaussian or central-gaussian, not %s", name, cfg.Randomizer)
			}
		}
		cfg.Participation, cfg.Rate, cfg.Adjacency = g.participation, g.rate, g.adjacency
		return nil
	}
	if changed("eps0") {
		return fmt.Errorf("eps0 does not apply to --randomizer %s (Gaussian noise: use --sigma)", cfg.Randomizer)
	}
	cfg.Eps0 = 0
	cfg.Participation, cfg.Rate, cfg.NoiseSum, cfg.Adjacency = g.participation, g.rate, g.noiseSum, g.adjacency
	if g.participation == training.ParticipationCheckIn && changed("sample") {
		return fmt.Errorf("sample does not apply to --participation checkin (the batch size is random: give --rate)")
	}
	if cfg.Randomizer == training.RandomizerCentralGaussian && changed("sample") && changed("rate") {
		return fmt.Errorf("rate: give --rate or --sample (rate sample/clients) for central-gaussian, not both")
	}
	switch {
	case changed("client-sigma") && cfg.Randomizer != training.RandomizerCentralGaussian:
		return fmt.Errorf("client-sigma applies to --randomizer central-gaussian (for gaussian, --sigma is the clients' own)")
	case changed("client-sigma") && changed("sigma"):
		return fmt.Errorf("client-sigma sets sigma = sqrt(B) * client-sigma; give it or --sigma, not both")
	case changed("client-sigma"):
		var err error
		if cfg.Sigma, err = training.CentralSigma(g.clientSigma, cfg.Clients, cfg.Sample, g.rate); err != nil {
			return err
		}
	case !changed("sigma"):
		return fmt.Errorf("sigma (noise multiplier) is required for --randomizer %s", cfg.Randomizer)
	default:
		cfg.Sigma = g.sigma
	}
	return nil
}
