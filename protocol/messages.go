package protocol

import (
	"crypto/sha256"
	"encoding/binary"
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
// debited: the run, the round id and the sealed report byte strings in a
// uniformly random order. No client identity, timestamp or arrival order
// is part of it.
type Batch struct {
	Run     string
	Round   int64
	Reports [][]byte
}

// Binding is the (run, round) a Batch's reports are sealed for.
func (b *Batch) Binding() Binding { return Binding{Run: b.Run, Round: b.Round} }

// Digest returns the SHA-256 of the batch in a canonical, unambiguous
// encoding: "shuffledp-batch-v1", then the run, the round and every report,
// each length-prefixed (uvarint lengths, round as 8 bytes little endian).
// The shuffler records it with its debit and the server with its receipt,
// so the two logs can be matched batch for batch.
func (b *Batch) Digest() [32]byte {
	// The encoding is staged through a buffer so that a batch of many
	// short reports costs a few hash writes, not two per report.
	var buf [4096]byte
	h := sha256.New()
	w := append(buf[:0], "shuffledp-batch-v1"...)
	w = binary.AppendUvarint(w, uint64(len(b.Run)))
	h.Write(w)
	h.Write([]byte(b.Run))
	w = binary.LittleEndian.AppendUint64(buf[:0], uint64(b.Round))
	w = binary.AppendUvarint(w, uint64(len(b.Reports)))
	for _, r := range b.Reports {
		if len(w)+binary.MaxVarintLen64+len(r) > len(buf) {
			h.Write(w)
			w = buf[:0]
		}
		w = binary.AppendUvarint(w, uint64(len(r)))
		if len(r) > len(buf)-binary.MaxVarintLen64 {
			h.Write(w)
			h.Write(r)
			w = buf[:0]
			continue
		}
		w = append(w, r...)
	}
	h.Write(w)
	var d [32]byte
	h.Sum(d[:0])
	return d
}
