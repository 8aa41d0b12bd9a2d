package protocol

import "errors"

// Reasons a shuffler gives the server when it stops the run (the reason of
// a StopRequest).
const (
	// StopTargetEpsilon: the shuffler's ledger refuses the next round (the
	// target epsilon would be exceeded).
	StopTargetEpsilon = "target-epsilon"
	// StopRounds: the shuffler's ledger holds the run's planned rounds (the
	// RunSpec's rounds), some of them debited and not applied by the
	// server (a batch lost to a crash or refused as computed on a stale
	// model): it debits no more.
	StopRounds = "rounds"
)

// ErrRoundsDebited is returned (wrapped) by the server's batch source when
// the shuffler stopped the run with StopRounds: every planned round is
// debited, and the server has applied fewer.
var ErrRoundsDebited = errors.New("the shuffler's ledger holds the run's planned rounds")
