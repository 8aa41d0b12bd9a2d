// Package pld is a privacy-loss-distribution (PLD) accountant: numerically
// tight (epsilon, delta) for compositions of mechanisms given by a
// dominating pair of distributions, with a certified upper bound and a
// reported discretisation error.
//
// A pair (P, Q) dominates a mechanism M if H_a(M(D)||M(D')) <= H_a(P||Q)
// for every order a > 0 and every ordered pair of neighbours (D, D'),
// H_a(X||Y) = sup_E X(E) - a Y(E) the hockey-stick divergence; then
// Delta(eps) = H_{e^eps}(P||Q) is a valid delta at eps, and the product
// pairs dominate the (adaptive) composition (Zhu, Dong & Wang, "Optimal
// accounting of differential privacy via characteristic function",
// AISTATS 2022, Def. 7 and Thm 10). The privacy loss distribution of
// (P, Q) is the law of log P(o)/Q(o) under P; composing mechanisms
// convolves PLDs (Meiser & Mohammadi, "Tight on budget?", CCS 2018;
// Koskela, Jälkö & Honkela, "Computing tight differential privacy
// guarantees using FFT", AISTATS 2020; Koskela, Jälkö, Prediger & Honkela,
// "Tight differential privacy for discrete-valued mechanisms and for the
// subsampled Gaussian mechanism using FFT", AISTATS 2021).
//
// Every PLD lives on a uniform grid of losses {j h} and comes in two
// sides (Bracket): Pessimistic, whose Delta and Epsilon are never below
// the true values (connect-the-dots discretisation, Doroshenko, Ghazi,
// Kamath, Kumar & Manurangsi, "Connect the dots: tighter discrete
// approximations of privacy loss distributions", PETS 2022; truncated
// tails moved to +inf or up; float round-off added), and Optimistic, never
// above them (a garbling of the pair onto the grid; tails dropped;
// round-off subtracted). The pair's true value lies in the Interval
// [Lower, Upper]; Upper is the guarantee. docs/proofs/pld.md proves every
// step.
//
// The API:
//
//   - Accountant: AddClone (the subsampled shuffle by the symmetric clone
//     pair, replace-one), AddPMFs (any pair over a finite outcome set,
//     add-remove style or symmetric), then Epsilon(delta) or Compose()
//     (a Composed, with Epsilon and Delta). Events may differ; the grid
//     is chosen for all of them (AutoGrid) unless Options.Grid is set.
//     The two orders of a neighbouring pair are composed separately and
//     the larger epsilon is reported. Epsilon(delta) tilts the FFT
//     convolutions for delta (tilt.go: the round-off is bounded in a
//     weighted norm and charged to Delta about delta-fold smaller, which
//     keeps the route usable at T = 1e6, delta = 1e-12); EpsilonLower
//     composes the optimistic side alone.
//     AddGaussian (sensitivity 1, noise sigma; symmetric) and
//     AddSampledGaussian (Poisson rate q, add-remove: the remove order
//     (1-q) N(0, s^2) + q N(1, s^2) vs N(0, s^2), the add order the
//     reverse).
//   - CloneShuffle(n, k, eps0, steps, opt), Gaussian(sigma, steps, opt),
//     SampledGaussian(sigma, rate, steps, opt): one event's Composed.
//   - FromPMFs(p, q, h), Symmetric(p, q, h): one step's Bracket;
//     Bracket.Compose, Bracket.SelfCompose, Bracket.Epsilon, Bracket.Delta.
//   - PLD: one side; Compose, SelfCompose, Delta, Epsilon.
//
// The shuffle Gaussian mechanisms use proven pairs that ignore the
// amplification by shuffling (docs/proofs/shuffle-gaussian.md): the
// Gaussian pair, AddWORGaussian (k of n without replacement, replace-one)
// and AddCheckinGaussian (the changed record's slot).
//
// Errors name the parameter at fault (n, k, eps0, sigma, rate, steps,
// delta, grid).
//
// The clone pair: the project's clone-pair proof (docs/proofs/clones-rdp.md)
// bounds H_a(X||Y) and H_a(Y||X) by H_a(P_g||Q_c) at a >= 1 only; at
// a < 1 the bound is the reversed pair. Composing the PLD of (P_g, Q_c) is
// therefore not an upper bound after two or more rounds (TestNaiveCloneCompositionFails
// shows it below the exact epsilon of 3-ary randomized
// response). The accountant composes the symmetric pair instead, whose
// curve at a >= 1 is that of (P_g, Q_c) in both directions.
package pld
