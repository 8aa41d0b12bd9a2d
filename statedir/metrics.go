package statedir

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// MetricsLog is an append-only JSON Lines file with at most one line per
// round, in increasing round order. Every line must carry an integer field
// "round". On open, a trailing partial line (a write cut by a crash) is
// truncated away, and the last complete line's round is remembered; Append
// skips records for rounds at or below it, so that a resumed run never
// duplicates a line.
//
// The caller writes a line only after the state the line describes (the
// checkpoint, the ledger entry) is durable; a crash between the two loses
// the line, never the state, and the resumed run re-evaluates.
type MetricsLog struct {
	f    *os.File
	last int // round of the last line; -1 if none
}

// OpenMetricsLog opens (creating if needed) the metrics file at path for
// appending. fresh truncates an existing file (a new run); otherwise the
// file is repaired and appended to.
func OpenMetricsLog(path string, fresh bool) (*MetricsLog, error) {
	flags := os.O_RDWR | os.O_CREATE
	if fresh {
		flags |= os.O_TRUNC
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if err != nil {
		return nil, err
	}
	m := &MetricsLog{f: f, last: -1}
	if err := m.repair(); err != nil {
		f.Close()
		return nil, fmt.Errorf("metrics %s: %w", path, err)
	}
	return m, nil
}

// repair drops a trailing partial line and finds the last round.
func (m *MetricsLog) repair() error {
	raw, err := io.ReadAll(m.f)
	if err != nil {
		return err
	}
	keep := len(raw)
	if keep > 0 && raw[keep-1] != '\n' {
		keep = bytes.LastIndexByte(raw, '\n') + 1
		if err := m.f.Truncate(int64(keep)); err != nil {
			return err
		}
	}
	if _, err := m.f.Seek(int64(keep), io.SeekStart); err != nil {
		return err
	}
	for _, line := range bytes.Split(raw[:keep], []byte{'\n'}) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var r struct {
			Round *int `json:"round"`
		}
		if err := json.Unmarshal(line, &r); err != nil || r.Round == nil {
			return fmt.Errorf("line %q is not a metrics record with a round", truncate(line, 80))
		}
		m.last = max(m.last, *r.Round)
	}
	return nil
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}

// LastRound is the round of the last complete line (-1 if none).
func (m *MetricsLog) LastRound() int { return m.last }

// Append writes rec (which must marshal to a JSON object) as one line for
// round, and fsyncs it, unless a line for this or a later round is already
// there (then it is skipped and wrote is false).
func (m *MetricsLog) Append(round int, rec any) (wrote bool, err error) {
	if round <= m.last {
		return false, nil
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return false, err
	}
	if _, err := m.f.Write(append(b, '\n')); err != nil {
		return false, err
	}
	if err := m.f.Sync(); err != nil {
		return false, err
	}
	m.last = round
	return true, nil
}

// Close closes the file.
func (m *MetricsLog) Close() error { return m.f.Close() }
