package statedir

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// File names inside a state directory.
const (
	LockFile       = "lock"
	ManifestFile   = "run.json"
	CheckpointFile = "checkpoint.ckpt"
	MetricsFile    = "metrics.jsonl"
)

// ErrLocked is returned (wrapped) by Open when another process holds the
// state directory.
var ErrLocked = errors.New("state directory is in use by another process")

// ErrFlagMismatch is returned (wrapped) by Open when the directory holds a
// run started with different flags.
var ErrFlagMismatch = errors.New("flags differ from the run in the state directory")

// Manifest describes the run a state directory holds.
type Manifest struct {
	// Run is the run's id: 16 random hex digits drawn from crypto/rand when
	// the directory is created. The ledger keys its entries by it.
	Run string `json:"run"`
	// Created is when the run was started.
	Created time.Time `json:"created"`
	// Flags are the settings the run was started with, as flag name →
	// canonical string value.
	Flags map[string]string `json:"flags"`
	// Ledger, in a shuffler's state directory, is the ledger its runs
	// debit (nil until the shuffler first opened one here).
	Ledger *LedgerBinding `json:"ledger,omitempty"`
}

// Options configure Open.
type Options struct {
	// Flags are the settings of this invocation (flag name → canonical
	// value). A new directory records them; an existing one must hold the
	// same values for every flag not listed in MayDiffer.
	Flags map[string]string
	// MayDiffer lists the flags that may change between a run and its
	// resumption (they affect neither privacy nor the random stream, e.g.
	// workers or the evaluation period).
	MayDiffer []string
	// Flag is the name of the flag that named the directory, used in
	// messages (default "state").
	Flag string
}

// Dir is an open, locked state directory.
type Dir struct {
	path     string
	lock     *os.File
	manifest Manifest
	created  bool
}

// Open creates (if needed) and locks the state directory at path. The
// parent of path must exist: a mistyped path is an error, not a new tree.
// If the directory already holds a run, its manifest must agree with
// opts.Flags (except opts.MayDiffer); otherwise the error names every
// differing flag with both values and says how to resume or start anew.
// Stale temporary files left by an interrupted WriteFileAtomic are removed.
// Close releases the lock.
func Open(path string, opts Options) (*Dir, error) {
	flag := opts.Flag
	if flag == "" {
		flag = "state"
	}
	if path == "" {
		return nil, fmt.Errorf("--%s: empty path", flag)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("--%s: %w", flag, err)
	}
	parent := filepath.Dir(abs)
	if st, err := os.Stat(parent); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("--%s %s: parent directory %s does not exist", flag, path, parent)
	}
	if st, err := os.Stat(abs); err == nil && !st.IsDir() {
		return nil, fmt.Errorf("--%s %s: exists and is not a directory", flag, path)
	}
	if err := os.Mkdir(abs, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("--%s %s: %w", flag, path, err)
	}
	lf, err := os.OpenFile(filepath.Join(abs, LockFile), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("--%s %s: %w", flag, path, err)
	}
	if err := unix.Flock(int(lf.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		owner, _ := os.ReadFile(lf.Name())
		lf.Close()
		who := strings.TrimSpace(string(owner))
		if who == "" {
			who = "unknown"
		}
		return nil, fmt.Errorf("--%s %s: %w (pid %s); wait for it to finish or stop it", flag, path, ErrLocked, who)
	}
	// The lock is ours: record our pid for the message above.
	if err := lf.Truncate(0); err == nil {
		lf.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	d := &Dir{path: abs, lock: lf}
	fail := func(err error) (*Dir, error) {
		d.Close()
		return nil, err
	}
	if err := removeTemps(abs); err != nil {
		return fail(fmt.Errorf("--%s %s: %w", flag, path, err))
	}
	raw, err := os.ReadFile(filepath.Join(abs, ManifestFile))
	switch {
	case errors.Is(err, os.ErrNotExist):
		id, err := newRunID()
		if err != nil {
			return fail(err)
		}
		d.manifest = Manifest{Run: id, Created: time.Now().UTC(), Flags: copyFlags(opts.Flags)}
		if err := writeJSONAtomic(filepath.Join(abs, ManifestFile), d.manifest); err != nil {
			return fail(fmt.Errorf("--%s %s: %w", flag, path, err))
		}
		d.created = true
	case err != nil:
		return fail(fmt.Errorf("--%s %s: %w", flag, path, err))
	default:
		if err := json.Unmarshal(raw, &d.manifest); err != nil || d.manifest.Run == "" {
			return fail(fmt.Errorf("--%s %s: %s is not a shuffledp run manifest", flag, path, ManifestFile))
		}
		if diff := Diff(d.manifest.Flags, opts.Flags, opts.MayDiffer); len(diff) > 0 {
			return fail(fmt.Errorf("--%s %s holds run %s started %s: %w: %s; rerun with the run's flags to resume it, or pass a new --%s to start anew",
				flag, path, d.manifest.Run, d.manifest.Created.Format(time.RFC3339), ErrFlagMismatch, strings.Join(diff, "; "), flag))
		}
	}
	return d, nil
}

// Diff lists, sorted by flag name, every flag whose value differs between
// the recorded and the current settings ("--eps0 was 1.5, now 2"), skipping
// the flags in mayDiffer.
func Diff(recorded, current map[string]string, mayDiffer []string) []string {
	skip := map[string]bool{}
	for _, f := range mayDiffer {
		skip[f] = true
	}
	names := map[string]bool{}
	for k := range recorded {
		names[k] = true
	}
	for k := range current {
		names[k] = true
	}
	var sorted []string
	for k := range names {
		if !skip[k] {
			sorted = append(sorted, k)
		}
	}
	sort.Strings(sorted)
	var out []string
	for _, k := range sorted {
		was, okW := recorded[k]
		now, okN := current[k]
		if okW && okN && was == now {
			continue
		}
		if !okW {
			was = "(unset)"
		}
		if !okN {
			now = "(unset)"
		}
		out = append(out, fmt.Sprintf("--%s was %s, now %s", k, was, now))
	}
	return out
}

// Path returns the absolute path of the directory.
func (d *Dir) Path() string { return d.path }

// File returns the path of name inside the directory.
func (d *Dir) File(name string) string { return filepath.Join(d.path, name) }

// Manifest returns the run's manifest.
func (d *Dir) Manifest() Manifest { return d.manifest }

// Created reports whether Open created the run (false: it resumes one).
func (d *Dir) Created() bool { return d.created }

// Close releases the lock. It is safe to call more than once.
func (d *Dir) Close() error {
	if d.lock == nil {
		return nil
	}
	err := d.lock.Close() // closing the descriptor releases the flock
	d.lock = nil
	return err
}

func newRunID() (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("run id: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

func copyFlags(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func writeJSONAtomic(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(path, append(b, '\n'))
}
