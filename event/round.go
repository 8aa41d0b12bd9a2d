package event

import (
	"errors"
	"fmt"
)

// Randomizer names of Round.Randomizer that RoundEvent treats apart; every
// other name is an eps0-LDP local randomizer (R_inf, R_1, R_2, PrivUnit,
// k-RR, ...: package randomizer). They are the names of the --randomizer
// flag of `shuffledp train` and of protocol.RunConfig.Randomizer.
const (
	// RandomizerGaussian: every participating client clips its gradient to
	// C in l2 and adds N(0, C^2 sigma^2 I) itself (DP-SGD in the shuffle
	// model, ICLR'23 submission Sec. 5.2); the shuffler permutes the
	// reports.
	RandomizerGaussian = "gaussian"
	// RandomizerCentralGaussian: central DP-SGD (Abadi et al. 2016):
	// clients Poisson-sampled at Rate send clipped gradients in the clear
	// to the server, the trusted curator, which adds one N(0, C^2 sigma^2
	// I) to their sum. No shuffler takes part.
	RandomizerCentralGaussian = "central-gaussian"
	// RandomizerNone: the non-private baseline (clear gradients); it has no
	// privacy event.
	RandomizerNone = "none"
)

// Participation modes of Round.Participation: who decides which clients
// report in a round.
const (
	// ParticipationSample: the shuffler samples k = Round.Reports of the n
	// clients without replacement; for central-gaussian, every client is
	// sampled independently at Round.Rate (Poisson sampling). "" means the
	// same.
	ParticipationSample = "sample"
	// ParticipationCheckIn: shuffled check-in (Liew et al. 2022; ICLR'23
	// submission Sec. 4.2): every client takes part with probability
	// Round.Rate by an independent coin (the client's own in simulation,
	// the shuffler's in a networked run, which pads selected clients that
	// do not deliver with dummies); the batch size K ~ Bin(n, Rate) is
	// random and public: the check-in event prices the view (K, the
	// shuffled K reports), a binomial mixture over K
	// (docs/proofs/dummy-reports.md, check-in rounds).
	ParticipationCheckIn = "checkin"
)

// Round is the public configuration of one training round, as every role
// of a run knows it before the round starts (the run's randomizer,
// participation, n, eps0 or sigma, rate and adjacency), with the number of
// reports of the batch it released.
type Round struct {
	Randomizer    string
	Participation string
	// Mechanism names the event's mechanism directly, as `shuffledp
	// account --mechanism` does (package account), instead of deriving it
	// from Randomizer and Participation, which must then be empty. Every
	// parameter is copied into the event (K from Reports), so that
	// Event.Validate names one the mechanism does not use.
	Mechanism string
	// N is the population: the number of clients.
	N int64
	// Reports is the number of reports in the released batch: k, for a
	// round of k of n sampled. A check-in or Poisson-sampled round's event
	// does not depend on it (its curve covers the batch size's
	// distribution).
	Reports int64
	// Eps0 is the eps0-LDP randomizer's local privacy parameter.
	Eps0 float64
	// Sigma is the Gaussian noise multiplier, in units of the clipping
	// norm C.
	Sigma float64
	// Rate is the check-in probability, or central-gaussian's Poisson
	// sampling rate.
	Rate float64
	// Adjacency is the relation the Gaussian round's epsilon is stated for
	// (adjacency.go); "" leaves a Gaussian event without one (its legacy
	// meaning, EffectiveAdjacency). An eps0-LDP round is replace-one
	// natively and takes "" or replace-one.
	Adjacency string
}

// RoundEvent is the privacy event of releasing one round of configuration
// r: the event the shuffler debits to its ledger before it forwards the
// batch, the one a simulation debits for the same round, and the one
// `shuffledp account` prices for the same mechanism. By round kind:
//
//	randomizer        participation  event
//	eps0-LDP          sample         subsampled-shuffle (n, k = Reports, eps0): NeurIPS'21 Thm 1
//	gaussian          sample         subsampled-shuffle-gaussian (n, k = Reports, sigma, adjacency): ICLR'23 submission Thm 2
//	gaussian          checkin        checkin-gaussian (n, rate, sigma, adjacency): ICLR'23 submission eq. (11)
//	central-gaussian  sample         sampled-gaussian (n, rate, sigma, adjacency): Mironov, Talwar, Zhang 2019
//
// A parameter the round kind does not use is not copied (the
// configurations that carry one validate it); an eps0-LDP event carries no
// adjacency (replace-one, its native relation, as ledgers have always
// stored it). Any other combination (randomizer none, check-in with an
// eps0-LDP randomizer or with central-gaussian) is an error, and so is an
// event that does not validate; errors name the parameter as a flag.
// With Round.Mechanism set (the accountant's question, any mechanism of
// Mechanisms, shuffle and shuffle-gaussian included) the event is that
// mechanism with every parameter of r, validated.
func RoundEvent(r Round) (Event, error) {
	var e Event
	switch r.Participation {
	case "", ParticipationSample, ParticipationCheckIn:
	default:
		return Event{}, fmt.Errorf("--participation must be %s or %s, got %q", ParticipationSample, ParticipationCheckIn, r.Participation)
	}
	checkIn := r.Participation == ParticipationCheckIn
	switch {
	case r.Mechanism != "" && (r.Randomizer != "" || r.Participation != ""):
		return Event{}, fmt.Errorf("a round names its mechanism (%s) or its randomizer and participation, not both", r.Mechanism)
	case r.Mechanism != "":
		e = Event{Mechanism: r.Mechanism, N: r.N, K: r.Reports, Eps0: r.Eps0, Sigma: r.Sigma, Rate: r.Rate, Adjacency: r.Adjacency}
	case r.Randomizer == "":
		return Event{}, errors.New("--randomizer must not be empty")
	case r.Randomizer == RandomizerNone:
		return Event{}, errors.New("--randomizer none releases clear gradients: it has no privacy event")
	case r.Randomizer == RandomizerCentralGaussian && checkIn:
		return Event{}, fmt.Errorf("--participation %s needs --randomizer %s (central-gaussian samples by Poisson sampling at --rate)", ParticipationCheckIn, RandomizerGaussian)
	case r.Randomizer == RandomizerCentralGaussian:
		e = Event{Mechanism: SampledGaussian, N: r.N, Rate: r.Rate, Sigma: r.Sigma, Adjacency: r.Adjacency}
	case r.Randomizer == RandomizerGaussian && checkIn:
		e = Event{Mechanism: CheckinGaussian, N: r.N, Rate: r.Rate, Sigma: r.Sigma, Adjacency: r.Adjacency}
	case r.Randomizer == RandomizerGaussian:
		e = Event{Mechanism: SubsampledShuffleGaussian, N: r.N, K: r.Reports, Sigma: r.Sigma, Adjacency: r.Adjacency}
	case checkIn:
		return Event{}, fmt.Errorf("--participation %s needs --randomizer %s (the accountant has the check-in curve of the Gaussian mechanism only), got %s", ParticipationCheckIn, RandomizerGaussian, r.Randomizer)
	case r.Adjacency != "" && r.Adjacency != AdjacencyReplaceOne:
		return Event{}, fmt.Errorf("--adjacency %s does not apply to --randomizer %s: eps0-LDP reports are bounded for %s", r.Adjacency, r.Randomizer, AdjacencyReplaceOne)
	default:
		e = Event{Mechanism: SubsampledShuffle, N: r.N, K: r.Reports, Eps0: r.Eps0}
	}
	if err := e.Validate(); err != nil {
		return Event{}, err
	}
	return e, nil
}

// Event is RoundEvent(r)'s event without the error, for the rounds of a
// configuration that was validated with RoundEvent when the run was
// configured (only the batch size changes from round to round). Where
// RoundEvent refuses r it returns the zero Event, which does not validate:
// no ledger debits it, so a shuffler that asked for it discards the batch
// instead of releasing it.
func (r Round) Event() Event {
	e, err := RoundEvent(r)
	if err != nil {
		return Event{}
	}
	return e
}

// RandomizerLDP is the randomizer name RoundOf gives an eps0-LDP round:
// any eps0-LDP local randomizer has the same event (RoundEvent's default
// row), so the name of the one used is not recorded in the event.
const RandomizerLDP = "eps0-ldp"

// RoundOf is the inverse of RoundEvent: the round configuration whose event
// e is, by the rows of RoundEvent's table read right to left (an eps0-LDP
// round's randomizer is RandomizerLDP). Every field of e is carried over,
// so RoundEvent(RoundOf(e)) gives e back exactly when e is an event some
// round debits (CheckRoundEvent). The mechanisms without subsampling
// (shuffle, shuffle-gaussian) are the event of no training round: every
// round samples k of n, even k = n.
func RoundOf(e Event) (Round, error) {
	r := Round{N: e.N, Reports: e.K, Eps0: e.Eps0, Sigma: e.Sigma, Rate: e.Rate, Adjacency: e.Adjacency, Participation: ParticipationSample}
	switch e.Mechanism {
	case SubsampledShuffle:
		r.Randomizer = RandomizerLDP
	case SubsampledShuffleGaussian:
		r.Randomizer = RandomizerGaussian
	case CheckinGaussian:
		r.Randomizer, r.Participation = RandomizerGaussian, ParticipationCheckIn
	case SampledGaussian:
		r.Randomizer = RandomizerCentralGaussian
	default:
		return Round{}, fmt.Errorf("%s is the event of no training round (rounds are %s, %s, %s or %s)", e, SubsampledShuffle, SubsampledShuffleGaussian, CheckinGaussian, SampledGaussian)
	}
	return r, nil
}

// CheckRoundEvent reports (nil) whether e is exactly the event RoundEvent
// builds for its round, RoundOf(e): an event a simulation or a shuffler
// debits. Otherwise the error says how e differs.
func CheckRoundEvent(e Event) error {
	r, err := RoundOf(e)
	if err != nil {
		return err
	}
	got, err := RoundEvent(r)
	if err != nil {
		return fmt.Errorf("%s: %w", e, err)
	}
	if got != e {
		return fmt.Errorf("%s is not the event of its round, which is %s", e, got)
	}
	return nil
}
