package server

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"sync"
)

// Receipt records one batch the server received: its run, round id, size
// and SHA-256 (protocol.Batch.Digest). The shuffler's ledger holds one
// debit per released batch with the same digest, so "every receipt has a
// debit" can be checked after any crash.
type Receipt struct {
	Run     string
	Round   int64
	Reports int
	Digest  [32]byte
}

// ReceiptLog is the server's append-only log of received batches.
type ReceiptLog interface {
	// Append records r; the server steps with a batch only after Append
	// returned nil (it may open and decode the batch meanwhile).
	Append(r Receipt) error
}

// MemoryReceipts is a ReceiptLog in memory. It is safe for concurrent use.
type MemoryReceipts struct {
	mu sync.Mutex
	rs []Receipt
}

// Append implements ReceiptLog.
func (m *MemoryReceipts) Append(r Receipt) error {
	m.mu.Lock()
	m.rs = append(m.rs, r)
	m.mu.Unlock()
	return nil
}

// Receipts returns a copy of the receipts so far, in arrival order.
func (m *MemoryReceipts) Receipts() []Receipt {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Receipt(nil), m.rs...)
}

// receiptLine is the JSON form of a Receipt in a FileReceipts log.
type receiptLine struct {
	Run     string `json:"run"`
	Round   int64  `json:"round"`
	Reports int    `json:"reports"`
	Digest  string `json:"sha256"`
}

// FileReceipts is a ReceiptLog appended to a file, one JSON object per
// line ({"run","round","reports","sha256"}), each line synced to disk
// before Append returns, so a receipt survives kill -9 of the server. A
// torn last line (a kill during the write) is the only possible damage.
type FileReceipts struct {
	mu sync.Mutex
	f  *os.File
}

// OpenFileReceipts opens (creating it if needed) the receipt log at path
// for appending.
func OpenFileReceipts(path string) (*FileReceipts, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("receipt log: %w", err)
	}
	return &FileReceipts{f: f}, nil
}

// Append implements ReceiptLog.
func (l *FileReceipts) Append(r Receipt) error {
	line, err := json.Marshal(receiptLine{Run: r.Run, Round: r.Round, Reports: r.Reports, Digest: hex.EncodeToString(r.Digest[:])})
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := l.f.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("receipt log: %w", err)
	}
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("receipt log: %w", err)
	}
	return nil
}

// Close closes the log file.
func (l *FileReceipts) Close() error { return l.f.Close() }

// ReadFileReceipts returns the receipts in the log at path, in order. A
// last line without its newline (torn by a kill during Append, so never
// acknowledged) is ignored; any other malformed line is an error.
func ReadFileReceipts(path string) ([]Receipt, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("receipt log: %w", err)
	}
	if i := bytes.LastIndexByte(raw, '\n'); i+1 < len(raw) {
		raw = raw[:i+1] // drop the torn tail
	}
	var rs []Receipt
	for n, line := range bytes.Split(bytes.TrimSuffix(raw, []byte("\n")), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var l receiptLine
		if err := json.Unmarshal(line, &l); err != nil {
			return nil, fmt.Errorf("receipt log %s line %d: %w", path, n+1, err)
		}
		r := Receipt{Run: l.Run, Round: l.Round, Reports: l.Reports}
		d, err := hex.DecodeString(l.Digest)
		if err != nil || len(d) != len(r.Digest) {
			return nil, fmt.Errorf("receipt log %s line %d: bad sha256 %q", path, n+1, l.Digest)
		}
		copy(r.Digest[:], d)
		rs = append(rs, r)
	}
	return rs, nil
}
