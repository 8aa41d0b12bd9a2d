package main

import (
	"github.com/spf13/pflag"

	"github.com/shuffledp/shuffledp/training"
)

// addTrainGaussianFlags defines the flags of the Gaussian runs (ICLR'23
// submission, Sec. 5.2); training.Config.ApplyGaussian judges them.
func addTrainGaussianFlags(fl *pflag.FlagSet, g *training.GaussianOptions) {
	fl.Float64Var(&g.Sigma, "sigma", 0, "noise multiplier of --randomizer gaussian (each client adds N(0, C^2 sigma^2 I)) or central-gaussian (the server adds it to the sum)")
	fl.Float64Var(&g.ClientSigma, "client-sigma", 0, "with --randomizer central-gaussian: sigma = sqrt(B) * client-sigma, B = --sample (or --rate x --clients): the same total noise as B Gaussian clients")
	fl.StringVar(&g.Participation, "participation", training.ParticipationSample, "who decides which clients report: sample (k = --sample of n, drawn by the shuffler) or checkin (each client checks in with probability --rate by its own coin; --randomizer gaussian)")
	fl.Float64Var(&g.Rate, "rate", 0, "check-in probability of --participation checkin, or the Poisson sampling rate of --randomizer central-gaussian (default sample/clients)")
	fl.StringVar(&g.Adjacency, "adjacency", "", "neighbouring datasets the epsilon of --randomizer gaussian or central-gaussian is for: replace-one or zero-out (gaussian; default replace-one), add-remove or zero-out (central-gaussian; default add-remove); see Gaussian runs below")
	fl.BoolVar(&g.NoiseSum, "noise-sum", false, "SIMULATION ONLY, --randomizer gaussian: add one summed noise vector N(0, m C^2 sigma^2 I) per round instead of one per client (same distribution of the server's sum; much faster; no per-client reports)")
}
