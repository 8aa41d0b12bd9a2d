package training

import (
	"errors"

	"github.com/shuffledp/shuffledp/randomizer"
)

// reportBatch holds one round's k reports, indexed by the client's slot in
// the round's sample until the shuffler permutes them.
type reportBatch struct {
	reports []randomizer.Report
	raw     [][]byte // scratch: the reports as plain byte strings for the shuffler
	errs    []error  // per shard
	nShards int
}

func newReportBatch(k, nShards int) *reportBatch {
	return &reportBatch{reports: make([]randomizer.Report, k), errs: make([]error, nShards), nShards: nShards}
}

// aggregate is Algorithm 1, line 10, before the division by k: the server
// adds the unbiased decodings of the shuffled reports into t.sum through
// randomizer.AddDecodedAll: O(1) per report for R_inf and R_2 (one signed
// coordinate each), one fast Walsh–Hadamard transform per round for R_1.
// It runs sequentially in shuffled order, which is deterministic given the
// permutation.
func (t *Trainer) aggregate() error {
	clear(t.sum)
	return randomizer.AddDecodedAll(t.mech.r, t.reports.reports, 1, t.sum)
}

// firstError returns the first non-nil error in shard order.
func firstError(errs []error) error {
	return errors.Join(errs...)
}
