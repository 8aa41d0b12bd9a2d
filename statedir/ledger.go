package statedir

import (
	"fmt"
	"slices"
	"time"
)

// LedgerBinding is the record, in a shuffler's state directory manifest,
// of the ledger that holds the directory's budget history: which ledger
// (the id the ledger drew when it was created, ledger.Identifier), where
// (the file in the directory, or a PostgreSQL database), since when, and
// the runs debited there. A shuffler refuses to continue when the ledger
// it finds is not this one or lacks one of these runs (a ledger file lost,
// emptied or replaced): the history of the runs would otherwise restart
// at round 0 (docs/proofs/ledger-continuity.md).
type LedgerBinding struct {
	// ID is the ledger's id.
	ID string `json:"id"`
	// File is the ledger's file name inside the directory; "" when the
	// ledger is a PostgreSQL database (Postgres).
	File string `json:"file,omitempty"`
	// Postgres is the PostgreSQL URL without its password; "" for a file.
	Postgres string `json:"postgres,omitempty"`
	// Created is when the directory was bound to the ledger (UTC).
	Created time.Time `json:"created"`
	// Runs are the runs debited in the ledger from this directory, in the
	// order they were first opened (each registered in the ledger before
	// it is listed here).
	Runs []string `json:"runs,omitempty"`
}

// HasRun reports whether run is one of the binding's runs.
func (b *LedgerBinding) HasRun(run string) bool {
	return b != nil && slices.Contains(b.Runs, run)
}

// Where names the ledger of the binding: its file in dir, or its database.
func (b *LedgerBinding) Where(d *Dir) string {
	if b.File != "" {
		return d.File(b.File)
	}
	return "PostgreSQL ledger " + b.Postgres
}

// SetLedger records b as the directory's ledger binding in its manifest,
// atomically (the manifest's other fields kept).
func (d *Dir) SetLedger(b LedgerBinding) error {
	if b.ID == "" {
		return fmt.Errorf("%s: a ledger binding needs the ledger's id", d.File(ManifestFile))
	}
	m := d.manifest
	b.Runs = slices.Clone(b.Runs)
	m.Ledger = &b
	if err := writeJSONAtomic(d.File(ManifestFile), m); err != nil {
		return fmt.Errorf("%s: %w", d.File(ManifestFile), err)
	}
	d.manifest = m
	return nil
}
