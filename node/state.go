package node

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/shuffledp/shuffledp/ledger"
	"github.com/shuffledp/shuffledp/statedir"
)

// ErrLedgerHistory is returned (wrapped) when a shuffler's ledger cannot
// show the budget history of its run: the ledger its state directory
// records is missing, empty or another one, lacks a run debited from the
// directory, or is behind the rounds the server has received. The shuffler
// then refuses to continue, and changes nothing: continuing would debit
// the run's rounds again from round 0 (docs/proofs/ledger-continuity.md).
var ErrLedgerHistory = errors.New("the ledger cannot show the run's budget history")

// recoverHint ends every ErrLedgerHistory message.
const recoverHint = "refusing to continue (a new or another ledger would restart the run's budget); restore the ledger from a backup of it, or start the run anew in a new --state directory (docs/operations.md, \"A lost or replaced ledger\")"

// RunHistory is what a shuffler's state directory records of the runs its
// ledger holds (ShufflerState): a shuffler asks CheckRun before it opens a
// run's ledger, and BindRun after (the run registered) and before its
// first debit; errors name the ledger (Where).
type RunHistory interface {
	CheckRun(ctx context.Context, run string) error
	BindRun(run string) error
	Where() string
}

// ShufflerState is the shuffler's state directory, locked for the node's
// life: the durable ledger with its report ids (DIR/ledger.db, embedded
// SQLite, or a PostgreSQL database), read by `shuffledp ledger show --state
// DIR`, and the manifest's record of that ledger (statedir.LedgerBinding:
// its id and the runs debited there), which OpenShufflerState and
// CheckRun hold the ledger to. ShufflerState implements RunHistory.
type ShufflerState struct {
	dir   *statedir.Dir
	Store ledger.Backend
	close func() error
}

var _ RunHistory = (*ShufflerState)(nil)

// OpenShufflerState locks dir (creating it; its parent must exist) and
// opens the ledger named by url (ledger.OpenStore): "" is the embedded
// SQLite ledger in dir; a postgres:// URL a PostgreSQL ledger that several
// shufflers may share.
//
// The directory's manifest records the ledger it was first opened with
// (its id, its file or database); a later open must find that ledger:
// a missing or empty ledger file, a ledger of another id (another run's
// copied in, a new database) or a ledger other than the recorded one is
// refused with an error wrapping ErrLedgerHistory that names the file,
// before anything is created or written (the recorded ledger is first
// opened read-only). A directory without a record (a new one, or one
// written before records existed) records the ledger it opens.
func OpenShufflerState(ctx context.Context, dir, url string) (*ShufflerState, error) {
	d, err := statedir.Open(dir, statedir.Options{Flag: "state"})
	if err != nil {
		return nil, err
	}
	target, flag := filepath.Join(d.Path(), ledger.FileName), "state"
	if url != "" {
		target, flag = url, "ledger"
	}
	bound := d.Manifest().Ledger
	if bound != nil {
		if err := checkBoundLedger(ctx, d, bound, url, target); err != nil {
			d.Close()
			return nil, err
		}
	}
	st, err := ledger.OpenStore(ctx, target, ledger.StoreOptions{})
	if err != nil {
		d.Close()
		return nil, fmt.Errorf("--%s: %w", flag, err)
	}
	s := &ShufflerState{dir: d, Store: st, close: st.Close}
	if bound == nil {
		if err := s.bind(ctx, url); err != nil {
			s.Close()
			return nil, err
		}
	}
	return s, nil
}

// checkBoundLedger checks, changing nothing, that target is the ledger
// the directory's manifest records.
func checkBoundLedger(ctx context.Context, d *statedir.Dir, b *statedir.LedgerBinding, url, target string) error {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("--state %s: %s; %s: %w", d.Path(), fmt.Sprintf(format, args...), recoverHint, ErrLedgerHistory)
	}
	manifest := d.File(statedir.ManifestFile)
	runs := "no run debited yet"
	if len(b.Runs) > 0 {
		runs = "run " + strings.Join(b.Runs, ", run ")
	}
	switch {
	case b.File == "" && url == "":
		return fail("%s records that this directory's budget (%s) is in the %s since %s, not in a file here; pass that ledger as --ledger",
			manifest, runs, b.Where(d), b.Created.Format(time.RFC3339))
	case b.File != "" && url != "":
		return fail("%s records that this directory's budget (%s) is in the ledger file %s since %s, not in --ledger %s",
			manifest, runs, b.Where(d), b.Created.Format(time.RFC3339), ledger.RedactURL(url))
	case b.File != "":
		st, err := os.Stat(target)
		switch {
		case errors.Is(err, os.ErrNotExist):
			return fail("the ledger %s is missing, but %s records that it holds this directory's budget (ledger %s, %s) since %s",
				target, manifest, b.ID, runs, b.Created.Format(time.RFC3339))
		case err != nil:
			return fail("the ledger %s: %v", target, err)
		case !st.Mode().IsRegular():
			return fail("the ledger %s is not a regular file", target)
		case st.Size() == 0:
			return fail("the ledger %s is empty (0 bytes), but %s records that it holds this directory's budget (ledger %s, %s) since %s",
				target, manifest, b.ID, runs, b.Created.Format(time.RFC3339))
		}
	}
	opened := "the ledger " + target
	if url != "" {
		opened = "the PostgreSQL ledger " + ledger.RedactURL(url)
	}
	id, err := readIdentity(ctx, target, b.File != "")
	if err != nil {
		return fail("%s cannot be read (%v), but %s records that this directory's budget (%s) is in ledger %s there",
			opened, err, manifest, runs, b.ID)
	}
	if id != b.ID {
		what := "ledger " + id
		if id == "" {
			what = "a ledger without an id"
		}
		return fail("%s is %s, but %s records that this directory's budget (%s) is in ledger %s since %s (another run's ledger, or a new one in its place?)",
			opened, what, manifest, runs, b.ID, b.Created.Format(time.RFC3339))
	}
	return nil
}

// readIdentity returns the id of the ledger target, opened read-only. A
// file's SQLite sidecars (-wal, -shm) that the read-only open creates are
// removed again, so that a refused start leaves the directory as it was.
func readIdentity(ctx context.Context, target string, file bool) (string, error) {
	var fresh statedir.FreshPaths
	if file {
		fresh = statedir.NewFreshPaths(target+"-wal", target+"-shm")
	}
	ro, err := ledger.OpenStore(ctx, target, ledger.StoreOptions{ReadOnly: true})
	if err != nil {
		fresh.Remove()
		return "", err
	}
	id, err := ro.(ledger.Identifier).Identity(ctx)
	ro.Close()
	fresh.Remove()
	return id, err
}

// bind records the open ledger in the directory's manifest.
func (s *ShufflerState) bind(ctx context.Context, url string) error {
	id, err := s.Store.(ledger.Identifier).Identity(ctx)
	if err != nil {
		return err
	}
	b := statedir.LedgerBinding{ID: id, File: ledger.FileName, Created: time.Now().UTC().Round(time.Second)}
	if url != "" {
		b.File, b.Postgres = "", ledger.RedactURL(url)
	}
	return s.dir.SetLedger(b)
}

// Ledger returns the directory's record of its ledger.
func (s *ShufflerState) Ledger() statedir.LedgerBinding { return *s.dir.Manifest().Ledger }

// CheckRun implements RunHistory: a run this directory debited before
// must be registered in the ledger (its rows lost, or the ledger another
// one: ErrLedgerHistory, naming the ledger).
func (s *ShufflerState) CheckRun(ctx context.Context, run string) error {
	b := s.dir.Manifest().Ledger
	if !b.HasRun(run) {
		return nil
	}
	_, err := s.Store.Run(ctx, run)
	if errors.Is(err, ledger.ErrUnknownRun) {
		return fmt.Errorf("--state %s: the ledger %s holds no entry of run %s, which %s records this directory debited there: %s: %w",
			s.dir.Path(), b.Where(s.dir), run, s.dir.File(statedir.ManifestFile), recoverHint, ErrLedgerHistory)
	}
	return err
}

// BindRun implements RunHistory: run (registered in the ledger) is
// recorded in the manifest before its first debit.
func (s *ShufflerState) BindRun(run string) error {
	b := s.Ledger()
	if b.HasRun(run) {
		return nil
	}
	b.Runs = append(b.Runs, run)
	return s.dir.SetLedger(b)
}

// Where implements RunHistory.
func (s *ShufflerState) Where() string {
	b := s.Ledger()
	return b.Where(s.dir)
}

// Close closes the ledger and releases the lock.
func (s *ShufflerState) Close() error {
	return errors.Join(s.close(), s.dir.Close())
}

// WriteAddr writes a listener's address to path atomically (for a parent
// process, such as `shuffledp up`, that started a node on port 0).
func WriteAddr(path, addr string) error {
	if path == "" {
		return nil
	}
	if err := statedir.WriteFileAtomic(path, []byte(addr+"\n")); err != nil {
		return fmt.Errorf("addr-file: %w", err)
	}
	return nil
}
