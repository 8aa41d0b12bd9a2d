// Package shard scales a run's shuffler out over several replicas that
// share one PostgreSQL ledger (docs/shards.md): the clients are split into
// shards by enrolment (Split: contiguous ranges, fixed by n, k and the
// number of shards, public and independent of the data), each shard is an
// independent subsampled shuffle with its own n_s, k_s, minimum batch and
// ledger rows (RunID: keyed (run, shard, round)), and the server sums the
// shards' released batches of a round (Collector).
//
// Privacy (docs/proofs/shards.md): the shards hold disjoint clients, so by
// parallel composition a client's guarantee is its own shard's
// subsampled-shuffle bound, with amplification by n_s and k_s (not n and
// k); the run's epsilon is the maximum over the shards (Epsilons).
//
// Availability: each shard is served by the replica holding its lease, a
// PostgreSQL session-level advisory lock on a key derived from (run,
// shard) (Lease); a standby blocks on the lock and takes the shard over
// when the active replica's session ends (a crash closes its connection;
// a paused replica's session expires after the lease's TTL, renewed by a
// heartbeat while the replica runs).
// The lease decides who works and fences its debits: taking it advances
// the shard's epoch in the ledger (ledger.AdvanceFenceOn), and the
// replica's debits commit only while that epoch is still its own
// (ledger.Options.Fence, checked in the debit's transaction), so a replica
// that lost the shard cannot debit; the ledger's UNIQUE (run, round) key
// and stale-view check forbid a double debit of a round id, and the
// Collector takes at most one batch per (shard, round).
package shard
