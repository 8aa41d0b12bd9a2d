// Package event describes privacy events as data: which mechanism ran, with
// which parameters, and how many times; not how it is bounded. It follows
// the pattern of Google's dp_accounting, where a DpEvent records what
// happened and an accountant interprets it.
//
// An Event is one application of a mechanism (one round): the shuffle model
// with eps0-LDP reports, with or without sampling k of n clients per round
// (Girgis et al., CCS'21 and NeurIPS'21), or the shuffle Gaussian
// mechanisms (ICLR'23 submission "Shuffle Gaussian mechanism for
// differential privacy"), or the central-DP baseline, the sampled Gaussian
// mechanism of DP-SGD (Mironov, Talwar, Zhang 2019). Events serialise to
// JSON, validate with errors that name the parameter as the shuffledp
// command-line flag, and build the per-round Rényi-DP curve of a named
// bound (package accounting). Epsilon composes a list of events and
// converts to (epsilon, delta)-DP exactly as `shuffledp account` does.
package event
