package protocol

import (
	"crypto/sha256"
	"encoding/binary"
	"strings"
	"testing"
)

func validConfig() RunConfig {
	return RunConfig{Run: "r", Model: "cnn", Dim: 10, Randomizer: "rinf", ClipNorm: NormLInf, Clip: 0.1, Eps0: 1,
		Population: 100, PerRound: 10, MinBatch: 10, ReportBytes: 2}
}

func TestRunConfigValidate(t *testing.T) {
	if err := validConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		mutate func(*RunConfig)
		want   string
	}{
		{func(c *RunConfig) { c.Run = "" }, "run"},
		{func(c *RunConfig) { c.Model = "" }, "model"},
		{func(c *RunConfig) { c.Dim = 0 }, "dim"},
		{func(c *RunConfig) { c.Randomizer = "" }, "randomizer"},
		{func(c *RunConfig) { c.ClipNorm = "l3" }, "clip-norm"},
		{func(c *RunConfig) { c.ClipNorm, c.ClampLinf = NormL2, true }, "linf-clip"},
		{func(c *RunConfig) { c.Clip = 0 }, "clip"},
		{func(c *RunConfig) { c.Eps0 = -1 }, "eps0"},
		{func(c *RunConfig) { c.Population = 0 }, "clients"},
		{func(c *RunConfig) { c.PerRound = 101 }, "sample"},
		{func(c *RunConfig) { c.MinBatch = 11 }, "min-batch"},
		{func(c *RunConfig) { c.MinBatch = 0 }, "min-batch"},
		{func(c *RunConfig) { c.ReportBytes = 0 }, "report-bytes"},
	} {
		c := validConfig()
		tc.mutate(&c)
		if err := c.Validate(); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one starting with %q", c, err, tc.want)
		}
	}
	none := validConfig()
	none.Randomizer, none.Eps0, none.ReportBytes = RandomizerNone, 0, 0
	if err := none.Validate(); err != nil {
		t.Errorf("non-private baseline: %v", err)
	}
}

// TestBatchDigest: the digest changes with the run, the round, any report
// and the order of the reports, and the encoding is unambiguous (reports
// "ab","c" and "a","bc" differ).
func TestBatchDigest(t *testing.T) {
	base := Batch{Run: "run", Round: 3, Reports: [][]byte{[]byte("ab"), []byte("c")}}
	d := base.Digest()
	if d != base.Digest() {
		t.Fatal("digest not deterministic")
	}
	for name, b := range map[string]Batch{
		"run":       {Run: "run2", Round: 3, Reports: base.Reports},
		"round":     {Run: "run", Round: 4, Reports: base.Reports},
		"report":    {Run: "run", Round: 3, Reports: [][]byte{[]byte("ab"), []byte("d")}},
		"order":     {Run: "run", Round: 3, Reports: [][]byte{[]byte("c"), []byte("ab")}},
		"split":     {Run: "run", Round: 3, Reports: [][]byte{[]byte("a"), []byte("bc")}},
		"run/round": {Run: "ru", Round: 3, Reports: [][]byte{[]byte("nab"), []byte("c")}},
		"empty":     {Run: "run", Round: 3},
	} {
		if b.Digest() == d {
			t.Errorf("changing the %s leaves the digest unchanged", name)
		}
	}
}

func TestPlaintext(t *testing.T) {
	var s Sealer = Plaintext{}
	var o Opener = Plaintext{}
	rep := []byte{1, 2, 3}
	b := Binding{Run: "r", Round: 1}
	sealed, err := s.Seal(b, rep)
	if err != nil || &sealed[0] != &rep[0] || s.Overhead() != 0 {
		t.Fatalf("Seal = %v, %v: want the report itself", sealed, err)
	}
	opened, err := o.Open(b, sealed)
	if err != nil || string(opened) != string(rep) {
		t.Fatalf("Open = %v, %v", opened, err)
	}
}

// TestBatchDigestEncoding checks the buffered digest against the encoding
// it documents, written out directly, for reports short and long (beyond
// the staging buffer) and batches that cross the buffer's boundary.
func TestBatchDigestEncoding(t *testing.T) {
	for _, tc := range []struct{ n, size int }{{0, 0}, {1, 0}, {3, 1}, {1500, 3}, {7, 4090}, {3, 5000}, {2, 100000}} {
		b := Batch{Run: "a run", Round: -5 + int64(tc.n), Reports: make([][]byte, tc.n)}
		for i := range b.Reports {
			b.Reports[i] = make([]byte, tc.size+i%3)
			for j := range b.Reports[i] {
				b.Reports[i][j] = byte(i*31 + j)
			}
		}
		enc := []byte("shuffledp-batch-v1")
		enc = binary.AppendUvarint(enc, uint64(len(b.Run)))
		enc = append(enc, b.Run...)
		enc = binary.LittleEndian.AppendUint64(enc, uint64(b.Round))
		enc = binary.AppendUvarint(enc, uint64(len(b.Reports)))
		for _, r := range b.Reports {
			enc = binary.AppendUvarint(enc, uint64(len(r)))
			enc = append(enc, r...)
		}
		if b.Digest() != sha256.Sum256(enc) {
			t.Errorf("%d reports of %d bytes: digest differs from the documented encoding", tc.n, tc.size)
		}
	}
}

// TestBatchDigestCountMismatch: a BatchDigest whose added reports differ
// in number from those declared digests no batch's encoding, and Sum
// refuses it.
func TestBatchDigestCountMismatch(t *testing.T) {
	for _, tc := range []struct{ declared, added int }{{2, 1}, {2, 3}, {0, 1}, {1, 0}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("declared %d, added %d: Sum did not panic", tc.declared, tc.added)
				}
			}()
			d := NewBatchDigest("run", 1, tc.declared)
			for range tc.added {
				d.Add([]byte{1, 2, 3})
			}
			d.Sum()
		}()
	}
}
