package training

import "fmt"

// GaussianOptions are the options of the Gaussian runs (ICLR'23 submission
// "Shuffle Gaussian mechanism", Sec. 5.2) as a command line gives them:
// DP-SGD in the shuffle model (RandomizerGaussian), shuffled check-in
// (ParticipationCheckIn) and the central-DP baseline
// (RandomizerCentralGaussian).
type GaussianOptions struct {
	// Sigma is the noise multiplier (--sigma).
	Sigma float64 `flag:"sigma" usage:"noise multiplier of --randomizer gaussian (each client adds N(0, C^2 sigma^2 I)) or central-gaussian (the server adds it to the sum)"`
	// ClientSigma, for central-gaussian only, sets Sigma = sqrt(B)
	// ClientSigma ([CentralSigma], --client-sigma).
	ClientSigma float64 `flag:"client-sigma" usage:"with --randomizer central-gaussian: sigma = sqrt(B) * client-sigma, B = --sample (or --rate x --clients): the same total noise as B Gaussian clients"`
	// Participation is ParticipationSample or ParticipationCheckIn.
	Participation string `flag:"participation" default:"sample" usage:"who decides which clients report: sample (k = --sample of n, drawn by the shuffler) or checkin (each client checks in with probability --rate by its own coin; --randomizer gaussian)"`
	// Rate is the check-in probability, or the Poisson sampling rate of
	// central-gaussian (0: sample/clients).
	Rate float64 `flag:"rate" usage:"check-in probability of --participation checkin, or the Poisson sampling rate of --randomizer central-gaussian (default sample/clients)"`
	// Adjacency names the neighbouring datasets the epsilon is for.
	Adjacency string `flag:"adjacency" usage:"neighbouring datasets the epsilon of --randomizer gaussian or central-gaussian is for: replace-one or zero-out (gaussian; default replace-one), add-remove or zero-out (central-gaussian; default add-remove); see Gaussian runs below"`
	// NoiseSum adds one summed noise vector per round (simulation only).
	NoiseSum bool `flag:"noise-sum" usage:"SIMULATION ONLY, --randomizer gaussian: add one summed noise vector N(0, m C^2 sigma^2 I) per round instead of one per client (same distribution of the server's sum; much faster; no per-client reports)"`
}

// ApplyGaussian copies o into c, whose Randomizer, Clients and Sample are
// set, and refuses the combinations that do not apply. given reports
// whether a parameter was given explicitly, by its flag name ("sigma",
// "client-sigma", "noise-sum", "eps0", "sample", "rate"); errors name the
// flag. For a randomizer that is not Gaussian only Participation, Rate and
// Adjacency are copied (Config.Validate judges them), and Sigma,
// ClientSigma and NoiseSum must not be given. For a Gaussian one, Eps0 must
// not be given and is zeroed; check-in refuses an explicit sample;
// central-gaussian takes a rate or a sample, not both; exactly one of
// sigma and client-sigma (central-gaussian only) sets c.Sigma.
func (c *Config) ApplyGaussian(o GaussianOptions, given func(flag string) bool) error {
	gaussian := c.Randomizer == RandomizerGaussian || c.Randomizer == RandomizerCentralGaussian
	if !gaussian {
		for _, name := range []string{"sigma", "client-sigma", "noise-sum"} {
			if given(name) {
				return fmt.Errorf("%s applies to --randomizer gaussian or central-gaussian, not %s", name, c.Randomizer)
			}
		}
		c.Participation, c.Rate, c.Adjacency = o.Participation, o.Rate, o.Adjacency
		return nil
	}
	if given("eps0") {
		return fmt.Errorf("eps0 does not apply to --randomizer %s (Gaussian noise: use --sigma)", c.Randomizer)
	}
	c.Eps0 = 0
	c.Participation, c.Rate, c.NoiseSum, c.Adjacency = o.Participation, o.Rate, o.NoiseSum, o.Adjacency
	if o.Participation == ParticipationCheckIn && given("sample") {
		return fmt.Errorf("sample does not apply to --participation checkin (the batch size is random: give --rate)")
	}
	if c.Randomizer == RandomizerCentralGaussian && given("sample") && given("rate") {
		return fmt.Errorf("rate: give --rate or --sample (rate sample/clients) for central-gaussian, not both")
	}
	return c.applyGaussianSigma(o, given)
}

// applyGaussianSigma sets c.Sigma from --sigma or --client-sigma.
func (c *Config) applyGaussianSigma(o GaussianOptions, given func(string) bool) error {
	switch {
	case given("client-sigma") && c.Randomizer != RandomizerCentralGaussian:
		return fmt.Errorf("client-sigma applies to --randomizer central-gaussian (for gaussian, --sigma is the clients' own)")
	case given("client-sigma") && given("sigma"):
		return fmt.Errorf("client-sigma sets sigma = sqrt(B) * client-sigma; give it or --sigma, not both")
	case given("client-sigma"):
		var err error
		c.Sigma, err = CentralSigma(o.ClientSigma, c.Clients, c.Sample, o.Rate)
		return err
	case !given("sigma"):
		return fmt.Errorf("sigma (noise multiplier) is required for --randomizer %s", c.Randomizer)
	default:
		c.Sigma = o.Sigma
		return nil
	}
}
