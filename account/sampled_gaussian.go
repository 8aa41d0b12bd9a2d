package account

import (
	"fmt"
	"math"

	"github.com/shuffledp/shuffledp/event"
)

// The central-DP baseline of `shuffledp account` and `calibrate`: the
// sampled Gaussian mechanism (package event; its curve from package route
// and package sampledgauss).

// checkClientSigma refuses --client-sigma outside sampled-gaussian, next to
// --sigma, or without --k (the number of clients whose noise it sums).
func (req Request) checkClientSigma() error {
	if !req.given("client-sigma") {
		return nil
	}
	switch {
	case req.Mechanism != event.SampledGaussian:
		return fmt.Errorf("--client-sigma is used only by --mechanism %s (for %s give --sigma)", event.SampledGaussian, req.Mechanism)
	case req.given("sigma"):
		return fmt.Errorf("--client-sigma sets sigma = sqrt(k) * client-sigma; give it or --sigma, not both")
	case !req.given("k"):
		return fmt.Errorf("--client-sigma needs --k, the clients per round whose noise the central sigma matches")
	case !(req.ClientSigma > 0) || math.IsInf(req.ClientSigma, 0):
		return fmt.Errorf("--client-sigma must be positive and finite, got %g", req.ClientSigma)
	case req.K < 1:
		return fmt.Errorf("--k must be >= 1, got %d", req.K)
	}
	return nil
}

// sampledGaussianRound is req.round() for sampled-gaussian: rate from
// --rate, or k/n when --k and --n are given instead; sigma from --sigma, or
// sqrt(k) * --client-sigma; n only when given. A flag the mechanism does
// not use (--eps0, or --k next to --rate) is copied so that
// event.Validate names it.
func (req Request) sampledGaussianRound() event.Round {
	e := event.Round{Mechanism: event.SampledGaussian, Sigma: req.Sigma, Rate: req.Rate}
	if req.given("n") {
		e.N = req.N
	}
	if req.given("k") {
		if !req.given("rate") && req.given("n") && req.K >= 1 && req.K <= req.N {
			e.Rate = float64(req.K) / float64(req.N)
		} else if !req.given("client-sigma") || req.given("rate") {
			e.Reports = req.K
		}
	}
	if req.given("client-sigma") {
		e.Sigma = math.Sqrt(float64(req.K)) * req.ClientSigma
	}
	if req.given("eps0") {
		e.Eps0 = req.Eps0
	}
	return e
}
