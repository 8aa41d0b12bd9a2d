package main

import (
	"fmt"
	"math"

	"github.com/shuffledp/shuffledp/event"
)

// The central-DP baseline of `shuffledp account` and `calibrate`: the
// sampled Gaussian mechanism (package event, curve from package
// sampledgauss).

const sampledGaussianAccountHelp = `
Central DP (no shuffler; the DP-SGD baseline of Opacus and TF Privacy):
  sampled-gaussian  each client is included with probability --rate (Poisson
                    sampling), the server adds N(0, sigma^2 I) to the sum of
                    clipped contributions; --rate may be given as --k with
                    --n (rate = k/n); --n is otherwise only echoed
Bounds: mtz19 (Mironov, Talwar, Zhang 2019: the exact RDP, every real order;
no assumption), gaussian-cor1 (no sampling, for comparison), best (default).
Adjacency: add-remove (default; one record added or removed) or zero-out (one
record replaced by zero: the same numbers). replace-one is refused: under
Poisson sampling its pair is not the add-remove pair at sigma/2, and MTZ19's
curve does not bound it.
Equal total noise (ICLR'23 Fig. 1): the shuffle-model run
  --mechanism subsampled-shuffle-gaussian --n N --k B --sigma S
(each of B clients adds N(0, S^2 I)) adds as much noise in total as
  --mechanism sampled-gaussian --n N --k B --client-sigma S
that is, rate B/N and sigma = sqrt(B) S.
`

// Registered during package variable initialisation, before account.go's
// init builds the help text.
var _ = registerSampledGaussianHelp()

func registerSampledGaussianHelp() bool {
	accountHelp = append(accountHelp, sampledGaussianAccountHelp)
	return true
}

// checkClientSigma refuses --client-sigma outside sampled-gaussian, next to
// --sigma, or without --k (the number of clients whose noise it sums).
func (req accountRequest) checkClientSigma() error {
	if !req.Given("client-sigma") {
		return nil
	}
	switch {
	case req.Mechanism != event.SampledGaussian:
		return fmt.Errorf("--client-sigma is used only by --mechanism %s (for %s give --sigma)", event.SampledGaussian, req.Mechanism)
	case req.Given("sigma"):
		return fmt.Errorf("--client-sigma sets sigma = sqrt(k) * client-sigma; give it or --sigma, not both")
	case !req.Given("k"):
		return fmt.Errorf("--client-sigma needs --k, the clients per round whose noise the central sigma matches")
	case !(req.ClientSigma > 0) || math.IsInf(req.ClientSigma, 0):
		return fmt.Errorf("--client-sigma must be positive and finite, got %g", req.ClientSigma)
	case req.K < 1:
		return fmt.Errorf("--k must be >= 1, got %d", req.K)
	}
	return nil
}

// sampledGaussianEvent is req.event() for sampled-gaussian: rate from
// --rate, or k/n when --k and --n are given instead; sigma from --sigma, or
// sqrt(k) * --client-sigma; n only when given. A flag the mechanism does
// not use (--eps0, or --k next to --rate) is copied so that
// event.Validate names it.
func (req accountRequest) sampledGaussianEvent() event.Event {
	e := event.Event{Mechanism: event.SampledGaussian, Sigma: req.Sigma, Rate: req.Rate}
	if req.Given("n") {
		e.N = req.N
	}
	if req.Given("k") {
		if !req.Given("rate") && req.Given("n") && req.K >= 1 && req.K <= req.N {
			e.Rate = float64(req.K) / float64(req.N)
		} else if !req.Given("client-sigma") || req.Given("rate") {
			e.K = req.K
		}
	}
	if req.Given("client-sigma") {
		e.Sigma = math.Sqrt(float64(req.K)) * req.ClientSigma
	}
	if req.Given("eps0") {
		e.Eps0 = req.Eps0
	}
	return e
}
