package shuffler

import "context"

// Release describes a batch the shuffler is about to forward: what the
// budget is debited for.
type Release struct {
	// Run and Round key the debit: a budget debits a (Run, Round) at most
	// once (a retry with the same Digest is a no-op; another Digest is
	// an error).
	Run   string
	Round int64
	// Reports is the number of reports in the batch (the realized batch
	// size the event is priced with).
	Reports int
	// Digest is protocol.Batch.Digest of the batch.
	Digest [32]byte
	// Dummies is how many of the reports are dummies (ServiceConfig.Dummies),
	// set on the release Service.Release returns, after the debit (a
	// budget never sees it). It is the shuffler's own figure: forwarding
	// it, or anything that depends on it, to the server would void the
	// dummy-report argument (docs/proofs/dummy-reports.md, (A3)).
	Dummies int
}

// Budget is the privacy budget of a run, as the shuffler needs it: Debit
// must make the release's privacy cost durable before it returns nil. Any
// error (the budget exhausted, a storage failure) means the batch is
// discarded, never forwarded.
type Budget interface {
	Debit(ctx context.Context, r Release) error
}

// Checker is an optional interface of a Budget: Check says whether a
// release of r.Reports reports in round r.Round would be debited now,
// without debiting (r.Digest is zero). The shuffler calls it before
// sampling a round, so that no client works for a round whose batch could
// not be released; Debit still decides.
type Checker interface {
	Check(ctx context.Context, r Release) error
}

// LastRounder is an optional interface of a Budget that outlives the
// process (a durable ledger): LastRound returns the last round id debited
// for run (0 if none). Before its first round a Service continues after
// the larger of this and ServiceConfig.LastRound, so that rounds debited
// after the last checkpoint, before a crash, never have their ids reused.
type LastRounder interface {
	LastRound(ctx context.Context, run string) (int64, error)
}
