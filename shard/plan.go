package shard

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/shuffledp/shuffledp/ledger"
)

// Part is one shard of a run: the clients Lo..Hi-1 (global client ids, as
// enrolled), of whom K report per round, and its own minimum batch.
type Part struct {
	// Index is the shard's number, 0..Shards-1.
	Index int
	// Lo and Hi bound the shard's clients: Lo <= client < Hi.
	Lo, Hi int64
	// K is the shard's k_s: the clients it samples per round.
	K int64
	// MinBatch is the shard's minimum batch: the run's minimum batch
	// scaled by K/k, rounded up, at least 1 and at most K.
	MinBatch int64
	// Run is the shard's ledger run id (RunID): its rows are keyed (run,
	// shard, round) by it.
	Run string
}

// N returns the shard's population n_s.
func (p Part) N() int64 { return p.Hi - p.Lo }

// Plan is the assignment of a run's n clients to its shards: fixed by (n,
// k, shards, min batch) alone, public, and independent of the clients'
// data, so that it can be published with the run and recorded at
// enrolment.
type Plan struct {
	Run      string
	N, K     int64
	MinBatch int64
	Parts    []Part
}

// Split assigns the clients 0..n-1 of run to shards contiguous ranges:
// the first n mod shards shards get ceil(n/shards) clients, the others
// floor(n/shards); the k reports per round are spread the same way (the
// first k mod shards shards sample one more). Every shard must sample at
// least one client and at most its population, so 1 <= shards <= k <= n.
// The run's minimum batch is minBatch (0: 1).
//
// Split with shards = 1 is the unsharded run: one part of all n clients,
// k of them per round, under the run's own id.
func Split(run string, n, k int64, shards int, minBatch ...int64) (Plan, error) {
	mb := int64(1)
	if len(minBatch) > 0 && minBatch[0] > 0 {
		mb = minBatch[0]
	}
	switch {
	case shards < 1:
		return Plan{}, fmt.Errorf("shards must be >= 1, got %d", shards)
	case n < 1:
		return Plan{}, fmt.Errorf("n (population) must be >= 1, got %d", n)
	case k < int64(shards):
		return Plan{}, fmt.Errorf("k (clients per round) must be at least the number of shards (every shard samples at least one client), got k=%d, shards=%d", k, shards)
	case k > n:
		return Plan{}, fmt.Errorf("k (clients per round) must be at most n, got k=%d, n=%d", k, n)
	case mb > k:
		return Plan{}, fmt.Errorf("min batch must be at most k, got %d > %d", mb, k)
	}
	if err := ledger.ValidateRun(run); err != nil {
		return Plan{}, err
	}
	p := Plan{Run: run, N: n, K: k, MinBatch: mb, Parts: make([]Part, shards)}
	S := int64(shards)
	lo := int64(0)
	for i := range p.Parts {
		_, hi := ClientRange(n, shards, i)
		ns := hi - lo
		ks := k / S
		if int64(i) < k%S {
			ks++
		}
		if ks > ns {
			return Plan{}, fmt.Errorf("shard %d would sample %d of its %d clients: k=%d is too large for n=%d in %d shards", i, ks, ns, k, n, shards)
		}
		p.Parts[i] = Part{Index: i, Lo: lo, Hi: lo + ns, K: ks,
			MinBatch: min(ks, max(1, (mb*ks+k-1)/k)), Run: RunID(run, i, shards)}
		lo += ns
	}
	return p, nil
}

// ClientRange returns the clients lo..hi-1 of shard i of n clients in
// shards shards (Split's assignment, which depends on n and shards only):
// the first n mod shards shards hold ceil(n/shards) clients, the others
// floor(n/shards).
func ClientRange(n int64, shards, i int) (lo, hi int64) {
	S, I := int64(shards), int64(i)
	size := func(j int64) int64 {
		if j < n%S {
			return n/S + 1
		}
		return n / S
	}
	lo = I*(n/S) + min(I, n%S)
	return lo, lo + size(I)
}

// Of returns the shard of client (a global client id, 0 <= client < n).
func (p Plan) Of(client int) int {
	for i, part := range p.Parts {
		if int64(client) >= part.Lo && int64(client) < part.Hi {
			return i
		}
	}
	return -1
}

// runSep separates a run id from its shard suffix.
const runSep = "#shard-"

// RunID returns the ledger run id of shard i of shards of run: run itself
// when shards = 1 (an unsharded run keeps its ledger rows), else
// "RUN#shard-I-of-S". Every shard's entries are keyed (RunID, round), so
// the ledger's UNIQUE (run, round) key is the (run, shard, round) key.
func RunID(run string, i, shards int) string {
	if shards == 1 {
		return run
	}
	return run + runSep + strconv.Itoa(i) + "-of-" + strconv.Itoa(shards)
}

// ParseRunID splits a ledger run id of RunID into the run, the shard and
// the number of shards (0, 1 for an id without a shard suffix).
func ParseRunID(id string) (run string, i, shards int, err error) {
	j := strings.LastIndex(id, runSep)
	if j < 0 {
		return id, 0, 1, nil
	}
	is, ss, ok := strings.Cut(id[j+len(runSep):], "-of-")
	if !ok {
		return "", 0, 0, fmt.Errorf("run id %q: malformed shard suffix", id)
	}
	i, err1 := strconv.Atoi(is)
	shards, err2 := strconv.Atoi(ss)
	if err1 != nil || err2 != nil || shards < 2 || i < 0 || i >= shards || RunID(id[:j], i, shards) != id {
		return "", 0, 0, fmt.Errorf("run id %q: malformed shard suffix", id)
	}
	return id[:j], i, shards, nil
}
