// Package statedir manages a training run's state directory (--state DIR):
// an exclusive lock so that two processes never share a run, the run's
// manifest (its id and the flags it was started with, so that a rerun with
// the same flags resumes and a rerun with different flags is refused naming
// the flag), crash-safe file replacement for checkpoints, and the metrics
// log, which is written only after the state it describes is durable and
// holds at most one line per round.
//
// The privacy ledger lives in the same directory (ledger.FileName) but is
// owned by the ledger package; statedir knows nothing about privacy.
//
// Layout:
//
//	DIR/lock             flock(2) target; holds the owner's pid for messages
//	DIR/run.json         Manifest
//	DIR/checkpoint.ckpt  written with WriteFileAtomic
//	DIR/metrics.jsonl    MetricsLog
//	DIR/ledger.db        the ledger package's SQLite database
package statedir
