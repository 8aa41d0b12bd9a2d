package event

import "fmt"

// CheckSolvable refuses to calibrate parameter param of mechanism m when
// m has no such parameter: sigma belongs to the Gaussian mechanisms
// (IsGaussian and SampledGaussian), eps0 to the LDP ones, k to the
// subsampled shuffle mechanisms (k of n per round), rate to check-in and
// Poisson sampling; every mechanism has steps. Errors name the flags of
// `shuffledp calibrate` (--solve, --mechanism). A param that is none of
// these is not judged here (nil).
func CheckSolvable(m, param string) error {
	gauss := IsGaussian(m) || m == SampledGaussian
	switch param {
	case "sigma":
		if !gauss {
			return fmt.Errorf("--solve sigma needs a Gaussian --mechanism (%s, %s, %s, %s); for %s solve eps0",
				ShuffleGaussian, SubsampledShuffleGaussian, CheckinGaussian, SampledGaussian, m)
		}
	case "eps0":
		if gauss {
			return fmt.Errorf("--solve eps0 needs an LDP --mechanism (%s, %s); for %s solve sigma", Shuffle, SubsampledShuffle, m)
		}
	case "k":
		if m != SubsampledShuffle && m != SubsampledShuffleGaussian {
			return fmt.Errorf("--solve k needs --mechanism %s or %s (k of n sampled per round), got %s",
				SubsampledShuffle, SubsampledShuffleGaussian, m)
		}
	case "rate":
		if m != CheckinGaussian && m != SampledGaussian {
			return fmt.Errorf("--solve rate needs --mechanism %s or %s, got %s", CheckinGaussian, SampledGaussian, m)
		}
	}
	return nil
}
