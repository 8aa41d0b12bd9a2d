package node

import (
	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/protocol"
)

// RoundEvent is the privacy event the shuffler debits for a released batch
// of reports reports of run — the event training records for the same run
// (training.Config.RoundEvent), so `ledger show` agrees with `account`:
//
//   - an eps0-LDP randomizer with k of n sampled: the subsampled shuffle
//     (NeurIPS'21 Theorem 1; n, k = reports, eps0);
//   - randomizer gaussian with k of n sampled: the subsampled shuffle
//     Gaussian mechanism (ICLR'23 submission Thm 2; n, k = reports, sigma);
//   - randomizer gaussian with participation checkin: the shuffled
//     check-in Gaussian mechanism (eq. (11); n, rate, sigma), whatever
//     the realized batch size, whose distribution the curve covers.
//
// The Gaussian events carry the run's adjacency (RunConfig.Adjacency,
// which the client pools compare between the server's publication and
// the shuffler's relay like every other field).
func RoundEvent(run protocol.RunConfig, reports int) event.Event {
	n := int64(run.Population)
	switch {
	case run.Randomizer == protocol.RandomizerGaussian && run.Participation == protocol.ParticipationCheckIn:
		return event.Event{Mechanism: event.CheckinGaussian, N: n, Rate: run.Rate, Sigma: run.Sigma, Adjacency: run.Adjacency}
	case run.Randomizer == protocol.RandomizerGaussian:
		return event.Event{Mechanism: event.SubsampledShuffleGaussian, N: n, K: int64(reports), Sigma: run.Sigma, Adjacency: run.Adjacency}
	}
	return event.Event{Mechanism: event.SubsampledShuffle, N: n, K: int64(reports), Eps0: run.Eps0}
}
