package protocol

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash"
)

// Model is what the server publishes for a round: the parameters of one
// version of the model. It depends only on the server's own state, never
// on which clients will be sampled, and names no client.
type Model struct {
	Run string
	// Version is the number of model steps the server has taken (0 for the
	// initial model). It is the server's count, not the round id: a round
	// the shuffler discards leaves the version unchanged.
	Version int64
	// Params is the parameter vector. In process it may be the server's
	// own vector, valid until the server's next step; a transport
	// serializes it.
	Params []float64
}

// Round is what the shuffler sends to each sampled client: the round id it
// assigned and the server's Model, relayed unchanged (so the server never
// learns who fetched it).
type Round struct {
	ID    int64
	Model Model
}

// Binding is what a sealed report is bound to: it opens only for the run
// and round it was sealed for.
func (r *Round) Binding() Binding { return Binding{Run: r.Model.Run, Round: r.ID} }

// Batch is what the shuffler forwards to the server after the budget was
// debited: the run, the round id, the version of the model the round
// relayed and the sealed report byte strings in a uniformly random order.
// No client identity, timestamp or arrival order is part of it.
type Batch struct {
	Run   string
	Round int64
	// ModelVersion is the Version of the Model the round relayed, the one
	// its reports were computed on (public: the server published it). The
	// server applies the batch to that version only; Digest does not
	// cover it (the ledgers match batches by their content).
	ModelVersion int64
	Reports      [][]byte
}

// Binding is the (run, round) a Batch's reports are sealed for.
func (b *Batch) Binding() Binding { return Binding{Run: b.Run, Round: b.Round} }

// Digest returns the SHA-256 of the batch in a canonical, unambiguous
// encoding: "shuffledp-batch-v1", then the run, the round and every report,
// each length-prefixed (uvarint lengths, round as 8 bytes little endian).
// The shuffler records it with its debit and the server with its receipt,
// so the two logs can be matched batch for batch.
func (b *Batch) Digest() [32]byte {
	d := NewBatchDigest(b.Run, b.Round, len(b.Reports))
	for _, r := range b.Reports {
		d.Add(r)
	}
	return d.Sum()
}

// BatchDigest computes a Batch's Digest incrementally, one report at a
// time, so that a shuffler can hash each report while it is still in cache
// from being copied into the batch: NewBatchDigest with the batch's run,
// round and number of reports, then Add for each report in batch order,
// then Sum. It is the same SHA-256 of the same encoding as Batch.Digest
// (which is written with it).
type BatchDigest struct {
	h hash.Hash
	// The encoding is staged through buf so that a batch of many short
	// reports costs a few hash writes, not two per report.
	buf [4096]byte
	w   []byte
	// want and added are the reports declared and added so far; Sum
	// refuses a mismatch, which would digest no batch's encoding.
	want, added int
}

// NewBatchDigest starts the digest of a batch of run and round holding n
// reports.
func NewBatchDigest(run string, round int64, n int) *BatchDigest {
	d := &BatchDigest{h: sha256.New(), want: n}
	w := append(d.buf[:0], "shuffledp-batch-v1"...)
	w = binary.AppendUvarint(w, uint64(len(run)))
	d.h.Write(w)
	d.h.Write([]byte(run))
	w = binary.LittleEndian.AppendUint64(d.buf[:0], uint64(round))
	d.w = binary.AppendUvarint(w, uint64(n))
	return d
}

// Add appends the next report of the batch.
func (d *BatchDigest) Add(r []byte) {
	d.added++
	if len(d.w)+binary.MaxVarintLen64+len(r) > len(d.buf) {
		d.h.Write(d.w)
		d.w = d.buf[:0]
	}
	d.w = binary.AppendUvarint(d.w, uint64(len(r)))
	if len(r) > len(d.buf)-binary.MaxVarintLen64 {
		d.h.Write(d.w)
		d.h.Write(r)
		d.w = d.buf[:0]
		return
	}
	d.w = append(d.w, r...)
}

// Sum returns the digest of the batch and ends the digest. The caller must
// have added exactly the n reports NewBatchDigest was given (the count is
// part of the encoding, written first): Sum panics otherwise, as on a
// programming error.
func (d *BatchDigest) Sum() [32]byte {
	if d.added != d.want {
		panic(fmt.Sprintf("protocol: BatchDigest: %d reports added, %d declared", d.added, d.want))
	}
	d.h.Write(d.w)
	d.w = nil
	var out [32]byte
	d.h.Sum(out[:0])
	return out
}
