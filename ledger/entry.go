package ledger

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/shuffledp/shuffledp/event"
)

// Errors a Store or a Ledger wraps; test with errors.Is.
var (
	// ErrConflict: an entry with the same (run, round) exists and records a
	// different event, digest or report count. Nothing was written.
	ErrConflict = errors.New("ledger: a different entry exists for this run and round")
	// ErrBudgetExhausted: debiting the event would take epsilon past the
	// run's target. Nothing was written; the batch must not be released.
	ErrBudgetExhausted = errors.New("ledger: target epsilon reached: the event would exceed it")
	// ErrStale: the run has entries the caller has not seen (another process
	// appended to it). Nothing was written; reload and retry.
	ErrStale = errors.New("ledger: the run has entries the caller has not seen")
	// ErrUnknownRun: no run with this id is registered in the store.
	ErrUnknownRun = errors.New("ledger: unknown run")
	// ErrRunMismatch: the run is registered with other accounting
	// parameters (delta, bound or orders) than the ones given.
	ErrRunMismatch = errors.New("ledger: run registered with other accounting parameters")
	// ErrCorrupt: the store failed its integrity check, or holds a row that
	// does not decode.
	ErrCorrupt = errors.New("ledger: integrity check failed")
	// ErrReplayed: a round's report IDs hold a replay (an ID repeated in
	// the batch, or claimed under another round of the run). The round was
	// not debited; the batch must be discarded.
	ErrReplayed = errors.New("ledger: report IDs claimed in another round (replays)")
)

// MaxRunLength is the longest run id, in bytes.
const MaxRunLength = 200

// Digest is the SHA-256 of a released (shuffled) batch, as the shuffler
// forwards it. It ties a ledger entry to the bytes that left the shuffler,
// so that a retry of a round can be told from a different batch for it.
// It encodes as 64 lowercase hexadecimal digits.
type Digest [32]byte

// String returns d in hexadecimal.
func (d Digest) String() string { return hex.EncodeToString(d[:]) }

// MarshalText encodes d in hexadecimal.
func (d Digest) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText decodes 64 hexadecimal digits.
func (d *Digest) UnmarshalText(text []byte) error {
	v, err := ParseDigest(string(text))
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// ParseDigest decodes 64 hexadecimal digits (either case).
func ParseDigest(s string) (Digest, error) {
	var d Digest
	if len(s) != 2*len(d) {
		return d, fmt.Errorf("digest: want %d hexadecimal digits, got %d characters", 2*len(d), len(s))
	}
	if _, err := hex.Decode(d[:], []byte(s)); err != nil {
		return Digest{}, fmt.Errorf("digest: %w", err)
	}
	return d, nil
}

// Entry is one debit: the privacy event of one released round of a run.
type Entry struct {
	Run   string      `json:"run"`
	Round int64       `json:"round"`
	Event event.Event `json:"event"`
	// Reports is the number of reports in the released batch.
	Reports int    `json:"reports"`
	Digest  Digest `json:"digest"`
	// Time is when the debit was committed (UTC); informational, it takes
	// no part in deciding whether two entries are the same.
	Time time.Time `json:"time"`
}

// Validate reports the first problem with e, naming the field.
func (e Entry) Validate() error {
	if err := ValidateRun(e.Run); err != nil {
		return err
	}
	if e.Round < 0 {
		return fmt.Errorf("round must be >= 0, got %d", e.Round)
	}
	if err := e.Event.Validate(); err != nil {
		return fmt.Errorf("event: %w", err)
	}
	if e.Reports < 1 {
		return fmt.Errorf("reports must be >= 1 (an empty batch is never released), got %d", e.Reports)
	}
	if e.Time.IsZero() {
		return errors.New("time must be set")
	}
	return nil
}

// same reports whether e and f record the same debit: the same key, event,
// report count and digest (the time may differ: a retry is later). An
// event without an adjacency (stored before the field existed) is the same
// as the event with its legacy adjacency spelled out
// (event.Event.EffectiveAdjacency), so a retry across an upgrade is not a
// conflict.
func (e Entry) same(f Entry) bool {
	if e.Run != f.Run || e.Round != f.Round || e.Reports != f.Reports || e.Digest != f.Digest {
		return false
	}
	ea, fa := e.Event, f.Event
	ea.Adjacency, fa.Adjacency = ea.EffectiveAdjacency(), fa.EffectiveAdjacency()
	a, errA := EncodeEvent(ea)
	b, errB := EncodeEvent(fa)
	return errA == nil && errB == nil && a == b
}

// ValidateRun checks a run id: 1 to MaxRunLength bytes of UTF-8 with no
// control characters.
func ValidateRun(run string) error {
	switch {
	case run == "":
		return errors.New("run must not be empty")
	case len(run) > MaxRunLength:
		return fmt.Errorf("run must be at most %d bytes, got %d", MaxRunLength, len(run))
	case !utf8.ValidString(run):
		return fmt.Errorf("run %q is not valid UTF-8", run)
	}
	for _, r := range run {
		if unicode.IsControl(r) {
			return fmt.Errorf("run %q contains a control character", run)
		}
	}
	return nil
}

// EncodeEvent returns the JSON text under which a store keeps ev. Go
// encodes a float64 in the shortest form that parses back to the same
// value, so the text decodes to an identical event.
func EncodeEvent(ev event.Event) (string, error) {
	for name, v := range map[string]float64{"eps0": ev.Eps0, "sigma": ev.Sigma, "rate": ev.Rate} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return "", fmt.Errorf("event: %s must be finite, got %g", name, v)
		}
	}
	b, err := json.Marshal(ev)
	if err != nil {
		return "", fmt.Errorf("event: %w", err)
	}
	return string(b), nil
}

// DecodeEvent parses the JSON text of an event as a store keeps it: one
// object, no unknown fields (a ledger written by a newer version that
// records more than this version understands is refused, not
// misread), and a valid event.
func DecodeEvent(text string) (event.Event, error) {
	dec := json.NewDecoder(bytes.NewReader([]byte(text)))
	dec.DisallowUnknownFields()
	var ev event.Event
	if err := dec.Decode(&ev); err != nil {
		return event.Event{}, fmt.Errorf("event %q: %w", text, err)
	}
	if err := dec.Decode(new(json.RawMessage)); err != io.EOF {
		return event.Event{}, fmt.Errorf("event %q: trailing data after the object", text)
	}
	if err := ev.Validate(); err != nil {
		return event.Event{}, fmt.Errorf("event %q: %w", text, err)
	}
	return ev, nil
}
