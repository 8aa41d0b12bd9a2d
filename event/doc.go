// Package event describes privacy events as data: which mechanism ran, with
// which parameters, and how many times; not how it is bounded. It follows
// the pattern of Google's dp_accounting, where a DpEvent records what
// happened and an accountant interprets it (here package route).
//
// An Event is one application of a mechanism (one round): the shuffle model
// with eps0-LDP reports, with or without sampling k of n clients per round
// (Girgis et al., CCS'21 and NeurIPS'21), or the shuffle Gaussian
// mechanisms (ICLR'23 submission "Shuffle Gaussian mechanism for
// differential privacy"), or the central-DP baseline, the sampled Gaussian
// mechanism of DP-SGD (Mironov, Talwar, Zhang 2019). Events serialise to
// JSON and validate with errors that name the parameter as the shuffledp
// command-line flag. RoundEvent turns a round's public configuration into
// its event (RoundOf and CheckRoundEvent invert it); the adjacency
// relations (EffectiveAdjacency, ComposedAdjacency), the parameters
// calibrate may solve for (CheckSolvable) and the reports per round are
// read from the event alone. The curves of the bounds, the routes and the
// (epsilon, delta) statements are package route's; event imports no other
// package of the module.
package event
