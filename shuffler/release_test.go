package shuffler

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/shuffledp/shuffledp/protocol"
)

// testReports returns n reports of size bytes with contents that differ
// between reports and positions.
func testReports(n, size int) [][]byte {
	in := make([][]byte, n)
	for i := range in {
		in[i] = make([]byte, size)
		for j := range in[i] {
			in[i][j] = byte(i*131 + j*7 + j>>8)
		}
	}
	return in
}

// TestCopyAndDigest checks, on both of its paths (inline below
// pipelineBytes, pipelined above it, with chunks that do and do not
// divide the batch and reports larger than a chunk), that the batch holds
// the reports in order, in fresh memory of its own, and that the digest is
// protocol.Batch.Digest of the copies (which TestBatchDigestEncoding pins
// to its documented encoding).
func TestCopyAndDigest(t *testing.T) {
	for _, tc := range []struct{ n, size int }{
		{0, 3}, {1, 3}, {10000, 3}, // R_inf-sized reports, inline
		{2000, 54825},              // a Fig. 6 (djw) batch, pipelined
		{7, chunkBytes + 1},        // one report per chunk
		{333, 4099},                // the last chunk short
		{pipelineBytes / 100, 100}, // exactly pipelineBytes
		{pipelineBytes/100 - 1, 100},
	} {
		t.Run(fmt.Sprintf("%dx%d", tc.n, tc.size), func(t *testing.T) {
			in := testReports(tc.n, tc.size)
			out, digest := copyAndDigest("run", 42, in, tc.size, nil)
			if len(out) != len(in) {
				t.Fatalf("%d reports out, want %d", len(out), len(in))
			}
			for i := range in {
				if !bytes.Equal(out[i], in[i]) {
					t.Fatalf("report %d differs from its input", i)
				}
				if cap(out[i]) != tc.size {
					t.Fatalf("report %d has capacity %d, want %d (appending to it must not reach the next)", i, cap(out[i]), tc.size)
				}
				if tc.size > 0 && &out[i][0] == &in[i][0] {
					t.Fatalf("report %d is the input's memory, not a copy", i)
				}
			}
			b := protocol.Batch{Run: "run", Round: 42, Reports: out}
			if digest != b.Digest() {
				t.Fatal("digest differs from protocol.Batch.Digest of the copies")
			}
			for i := range in { // the batch does not alias the submitted reports
				clear(in[i])
			}
			if digest != b.Digest() {
				t.Fatal("clearing the inputs changed the batch")
			}
		})
	}
}

// With a batchMemory, copyAndDigest copies a batch into the memory of the
// one before when it holds enough (no allocation), and into fresh memory,
// then kept, when it does not; on both paths the batch and its digest are
// those of fresh memory, and no report aliases its input.
func TestCopyAndDigestReusesMemory(t *testing.T) {
	mem := new(batchMemory)
	var prev *byte
	for i, tc := range []struct {
		n, size int
		reused  bool
	}{
		{1000, 75, false}, {1000, 75, true}, {800, 75, true}, // smaller: the same memory
		{1001, 75, false}, {1001, 75, true}, // larger: grown, then reused
		{pipelineBytes/100 + 7, 100, false}, {pipelineBytes/100 + 7, 100, true}, // pipelined
	} {
		in := testReports(tc.n, tc.size)
		want, wantDigest := copyAndDigest("run", int64(i), in, tc.size, nil)
		out, digest := copyAndDigest("run", int64(i), in, tc.size, mem)
		if digest != wantDigest || len(out) != len(want) {
			t.Fatalf("batch %d: digest or length differs from a fresh copy's", i)
		}
		for j := range out {
			if !bytes.Equal(out[j], in[j]) || cap(out[j]) != tc.size || &out[j][0] == &in[j][0] {
				t.Fatalf("batch %d report %d: not a capped copy of its input", i, j)
			}
		}
		if got := &out[0][0] == prev; got != tc.reused {
			t.Fatalf("batch %d (%d x %d): reused the memory of the one before: %v, want %v", i, tc.n, tc.size, got, tc.reused)
		}
		prev = &out[0][0]
	}
	in := testReports(1000, 75)
	copyAndDigest("run", 1, in, 75, mem)
	fresh := testing.AllocsPerRun(10, func() { copyAndDigest("run", 1, in, 75, nil) })
	if a := testing.AllocsPerRun(10, func() { copyAndDigest("run", 1, in, 75, mem) }); a > fresh-2 {
		t.Errorf("a reused batch of 1,000 reports: %.0f allocations, a fresh one %.0f; want the batch's two fewer", a, fresh)
	}
}

// BenchmarkCopyAndDigest releases a Fig. 6 batch (k = 2,000 djw reports of
// 1 + 4d = 54,825 bytes at d = 13,706, unsealed as in simulation) the way
// Release does, "pipelined", and the way it did before, "serial": copy
// every report, then hash the batch.
func BenchmarkCopyAndDigest(b *testing.B) {
	const k, size = 2000, 54825
	in := testReports(k, size)
	b.Run("pipelined", func(b *testing.B) {
		b.SetBytes(k * size)
		for b.Loop() {
			copyAndDigest("run", 1, in, size, nil)
		}
	})
	b.Run("serial", func(b *testing.B) {
		b.SetBytes(k * size)
		for b.Loop() {
			backing := make([]byte, size*k)
			out := make([][]byte, k)
			for i, r := range in {
				out[i] = backing[i*size : (i+1)*size : (i+1)*size]
				copy(out[i], r)
			}
			batch := protocol.Batch{Run: "run", Round: 1, Reports: out}
			batch.Digest()
		}
	})
}
