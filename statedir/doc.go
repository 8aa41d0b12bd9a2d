// Package statedir manages a training run's state directory (--state DIR):
// an exclusive lock so that two processes never share a run, the run's
// manifest (its id and the flags it was started with, so that a rerun with
// the same flags resumes and a rerun with different flags is refused naming
// the flag), crash-safe file replacement for checkpoints, and the metrics
// log, which is written only after the state it describes is durable and
// holds at most one line per round.
//
// Session holds a run's state directory for the life of a process: the
// lock, the durable privacy ledger (ledger.FileName, a SQLite database the
// ledger package owns and prices; the session only opens it), the server's
// receipt log, the metrics log and the checkpoint file. What a checkpoint
// holds, and when it is written, is the training loop's (package
// training); statedir stores its bytes.
//
// Layout:
//
//	DIR/lock             flock(2) target; holds the owner's pid for messages
//	DIR/run.json         Manifest
//	DIR/checkpoint.ckpt  written with WriteFileAtomic
//	DIR/metrics.jsonl    MetricsLog
//	DIR/ledger.db        the ledger package's SQLite database
//	DIR/receipts.jsonl   the server's receipt log (ReceiptsFile)
package statedir
