// Package ledger is the durable, append-only privacy ledger of a training
// run in the shuffle model.
//
// Every round that releases a shuffled batch is one privacy event (package
// event): the subsampled shuffle mechanism of NeurIPS'21 eq. (3), a
// Gaussian shuffle mechanism, and so on. The shuffler debits the round's
// event here, in one durable transaction keyed (run, round), before the
// batch leaves it; a retry of the same round finds the entry and debits
// nothing, and a round whose event would take epsilon past the run's target
// is refused with nothing written. Because the ledger, not the trainer's
// checkpoint, owns the budget, a run that is killed and restarted continues
// from every debit that was committed, and no released round is forgotten
// or counted twice.
//
// The ledger is two layers. A Store keeps entries: SQLStore, one
// implementation over database/sql of two databases, an embedded SQLite
// file (OpenSQLite; pure Go, durable across kill -9 and power loss as far
// as SQLite's WAL with synchronous=FULL is) and a PostgreSQL database
// (OpenPostgres, through pgx's database/sql driver; shufflers on several
// machines can share it), whose few differences are one dialect value
// each (dialect.go); and MemoryStore (for tests). OpenStore opens a
// postgres:// URL or an SQLite file path. Both also keep the report IDs a shuffler has accepted
// (ReportIDStore), so that a replayed report is refused across rounds and
// restarts. A Ledger holds one run's budget on top of a Store: it prices
// an event by composing RDP curves (Mironov 2017, Prop. 1: RDP composes
// additively at every order) and converts the total to (epsilon, delta) with
// the accounting package, exactly as `shuffledp account` does for the same
// events.
package ledger
