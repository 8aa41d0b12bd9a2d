package protocol

// Binding names the run and round a report is sealed for. A report sealed
// for one (run, round) must not open for another, so a report cannot be
// replayed into a different round or run. Run is the ledger run id of the
// shuffler that releases the report: the run's id, or in a sharded run the
// shard's (RUN#shard-I-of-S, which names the shard), whose round ids are
// its own, so that a report of one shard does not open in another's batch.
type Binding struct {
	Run   string
	Round int64
}

// Sealer seals a client's report to the server, so that the shuffler,
// which carries it, cannot read it. Implementations are safe for
// concurrent use.
type Sealer interface {
	// Seal returns report sealed for b. It may return report itself when
	// sealing is the identity (Plaintext); the caller must not modify
	// report afterwards.
	Seal(b Binding, report []byte) ([]byte, error)
	// Overhead is the number of bytes Seal adds to a report.
	Overhead() int
}

// Opener opens sealed reports on the server. Implementations are safe for
// concurrent use.
type Opener interface {
	// Open returns the report inside sealed, or an error if sealed was not
	// sealed for b or was altered. It may return a sub-slice of sealed;
	// it does not modify sealed (the server hashes the batch for its
	// receipt while it opens the reports).
	Open(b Binding, sealed []byte) ([]byte, error)
}

// Plaintext is the identity "sealing": Seal and Open return the report
// unchanged and bind it to nothing.
//
// SIMULATION ONLY: with Plaintext the shuffler (and anyone on the path)
// can read every report, and a report opens for any run and round. It
// serves the in-process simulation, where all roles share one address
// space anyway. A deployment seals with HPKESealer and opens with
// HPKEOpener: HPKE (RFC 9180) to the server's key, bound to the run, the
// round, the key ID and a random report ID.
type Plaintext struct{}

// Seal implements Sealer: it returns report itself.
func (Plaintext) Seal(_ Binding, report []byte) ([]byte, error) { return report, nil }

// Overhead implements Sealer: 0.
func (Plaintext) Overhead() int { return 0 }

// Open implements Opener: it returns sealed itself.
func (Plaintext) Open(_ Binding, sealed []byte) ([]byte, error) { return sealed, nil }
