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
