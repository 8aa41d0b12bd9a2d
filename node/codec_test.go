package node

import (
	"bytes"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	pb "github.com/shuffledp/shuffledp/proto/shuffledp/v1"
)

// randomChunk returns a ReportChunk with random fields: runs with
// multi-byte characters, rounds and clients over the whole int64 range,
// empty and non-empty tokens and reports, declined credentials.
func randomChunk(rng *rand.Rand) *pb.ReportChunk {
	runs := []string{"", "run-1", "rün ünïcode", "RUN#shard-1-of-3"}
	ints := func() int64 {
		switch rng.IntN(4) {
		case 0:
			return 0
		case 1:
			return rng.Int64N(70000)
		case 2:
			return -rng.Int64()
		default:
			return math.MaxInt64 - rng.Int64N(3)
		}
	}
	bs := func(max int) []byte {
		n := rng.IntN(max + 1)
		if n == 0 {
			return nil
		}
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	c := &pb.ReportChunk{Run: runs[rng.IntN(len(runs))], Round: ints()}
	for range rng.IntN(40) {
		c.Reports = append(c.Reports, &pb.Report{Client: ints(), Token: bs(40), Sealed: bs(120)})
	}
	for range rng.IntN(3) {
		c.Declined = append(c.Declined, &pb.ClientCredential{Client: ints(), Token: bs(40)})
	}
	return c
}

// split cuts b into a BufferSlice of a few pieces, as gRPC hands over a
// message received in several frames.
func split(rng *rand.Rand, b []byte) mem.BufferSlice {
	var s mem.BufferSlice
	for len(b) > 0 {
		n := 1 + rng.IntN(len(b))
		s = append(s, mem.SliceBuffer(bytes.Clone(b[:n])))
		b = b[n:]
	}
	return s
}

// The codec decodes every ReportChunk protobuf encodes to the message
// protobuf decodes (proto.Equal), through its own decoder (not by falling
// back to protobuf's), whatever the split of the bytes into buffers; a
// message with a field it does not expect (an unknown field) is decoded by
// protobuf, unknown field kept.
func TestSubmitCodecMatchesProto(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	codec := newSubmitCodec()
	for i := range 500 {
		want := randomChunk(rng)
		wire, err := proto.Marshal(want)
		if err != nil {
			t.Fatal(err)
		}
		direct := new(pb.ReportChunk)
		if err := decodeReportChunk(wire, direct, nil); err != nil {
			t.Fatalf("message %d: own decoder refused a valid chunk: %v", i, err)
		}
		got := new(pb.ReportChunk)
		if err := codec.Unmarshal(split(rng, wire), got); err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		if !proto.Equal(got, want) || !proto.Equal(direct, want) {
			t.Fatalf("message %d: decoded %v, want %v", i, got, want)
		}
		// An unknown field (number 9): protobuf's decoder, same result.
		extra := protowire.AppendVarint(protowire.AppendTag(bytes.Clone(wire), 9, protowire.VarintType), 7)
		if decodeReportChunk(extra, new(pb.ReportChunk), nil) == nil {
			t.Fatalf("message %d: own decoder took an unknown field", i)
		}
		viaProto, viaCodec := new(pb.ReportChunk), new(pb.ReportChunk)
		if err := proto.Unmarshal(extra, viaProto); err != nil {
			t.Fatal(err)
		}
		if err := codec.Unmarshal(mem.BufferSlice{mem.SliceBuffer(extra)}, viaCodec); err != nil || !proto.Equal(viaCodec, viaProto) {
			t.Fatalf("message %d with an unknown field: %v, %v; want %v", i, viaCodec, err, viaProto)
		}
	}
}

// One chunkReceiver takes a stream's chunks one after another, reusing its
// buffers: each chunk decodes to exactly protobuf's message (nothing left
// of the chunk before it: fewer reports, no declines, no run), whether it
// is larger or smaller than the one before, taken by the own decoder or
// handed to protobuf's (an unknown field) or malformed (then the next
// chunk still decodes); and a chunk no larger than one before costs no
// new buffer or report array.
func TestChunkReceiverReuse(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	codec := newSubmitCodec()
	recv := new(chunkReceiver)
	for i := range 600 {
		want := randomChunk(rng)
		wire, err := proto.Marshal(want)
		if err != nil {
			t.Fatal(err)
		}
		switch i % 5 {
		case 3: // an unknown field: protobuf's decoder
			wire = protowire.AppendVarint(protowire.AppendTag(wire, 9, protowire.VarintType), 7)
			want = new(pb.ReportChunk)
			if err := proto.Unmarshal(wire, want); err != nil {
				t.Fatal(err)
			}
		case 4: // malformed: both fail
			wire = append(wire, 0x1a, 0x05, 0x08)
			if err := codec.Unmarshal(split(rng, wire), recv); err == nil {
				t.Fatalf("chunk %d: a malformed chunk decoded", i)
			}
			continue
		}
		if err := codec.Unmarshal(split(rng, wire), recv); err != nil {
			t.Fatalf("chunk %d: %v", i, err)
		}
		if !proto.Equal(&recv.ReportChunk, want) {
			t.Fatalf("chunk %d: decoded %v, want %v", i, &recv.ReportChunk, want)
		}
	}
	// Warm: the same chunk again allocates at most the run's string and
	// the declined credentials.
	c := &pb.ReportChunk{Run: "r", Round: 3}
	for j := range 64 {
		c.Reports = append(c.Reports, &pb.Report{Client: int64(j), Token: make([]byte, 32), Sealed: make([]byte, 75)})
	}
	wire, _ := proto.Marshal(c)
	data := mem.BufferSlice{mem.SliceBuffer(wire)}
	if err := codec.Unmarshal(data, recv); err != nil {
		t.Fatal(err)
	}
	if a := testing.AllocsPerRun(20, func() { codec.Unmarshal(data, recv) }); a > 1 {
		t.Errorf("a warm chunkReceiver: %.1f allocations per chunk of 64 reports, want at most 1 (the run)", a)
	}
	if !proto.Equal(&recv.ReportChunk, c) {
		t.Fatalf("decoded %v, want %v", &recv.ReportChunk, c)
	}
}

// Malformed and truncated messages: the codec fails exactly when protobuf
// fails, and otherwise decodes what protobuf decodes.
func TestSubmitCodecMalformed(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	good, _ := proto.Marshal(&pb.ReportChunk{Run: "r", Round: 2, Reports: []*pb.Report{{Client: 1, Token: []byte("t"), Sealed: []byte("sealed")}}})
	cases := [][]byte{
		{0x0a, 0x02, 0xff, 0xfe},       // run: invalid UTF-8
		{0x10, 0xff, 0xff, 0xff, 0xff}, // round: a varint cut short
		{0x1a, 0x05, 0x08},             // a report longer than the message
		{0x1a, 0x02, 0x08, 0x80},       // a report whose client is cut short
		{0x1a, 0x02, 0x10, 0x01},       // a report with a token as a varint
		{0x00},                         // field number 0
		{0x0b},                         // a group start
	}
	for cut := range good {
		cases = append(cases, good[:cut])
	}
	for range 200 {
		b := bytes.Clone(good)
		b[rng.IntN(len(b))] ^= byte(1 + rng.IntN(255))
		cases = append(cases, b)
	}
	codec := newSubmitCodec()
	for i, b := range cases {
		want := new(pb.ReportChunk)
		werr := proto.Unmarshal(b, want)
		got := new(pb.ReportChunk)
		gerr := codec.Unmarshal(mem.BufferSlice{mem.SliceBuffer(bytes.Clone(b))}, got)
		if (werr == nil) != (gerr == nil) || (werr == nil && !proto.Equal(got, want)) {
			t.Errorf("case %d %x: codec %v, %v; protobuf %v, %v", i, b, got, gerr, want, werr)
		}
	}
}

// The reports' bytes alias the chunk's one copy, but each is capped at its
// own length: appending to one report's bytes never writes into another's.
func TestSubmitCodecReportsCapped(t *testing.T) {
	want := &pb.ReportChunk{Run: "r", Reports: []*pb.Report{
		{Client: 1, Token: []byte("token-1"), Sealed: []byte("sealed-1")},
		{Client: 2, Token: []byte("token-2"), Sealed: []byte("sealed-2")},
	}}
	wire, _ := proto.Marshal(want)
	got := new(pb.ReportChunk)
	if err := decodeReportChunk(wire, got, nil); err != nil {
		t.Fatal(err)
	}
	for _, r := range got.Reports {
		if cap(r.Token) != len(r.Token) || cap(r.Sealed) != len(r.Sealed) {
			t.Fatalf("report %d: token cap %d len %d, sealed cap %d len %d", r.Client, cap(r.Token), len(r.Token), cap(r.Sealed), len(r.Sealed))
		}
		_ = append(r.Sealed, "XXXXXXXXXXXXXXXX"...)
		_ = append(r.Token, "XXXXXXXXXXXXXXXX"...)
	}
	if !proto.Equal(got, want) {
		t.Fatalf("after appending: %v, want %v", got, want)
	}
}

// FuzzSubmitCodec: for any bytes, the codec and protobuf agree on failing,
// and on the message when both decode.
func FuzzSubmitCodec(f *testing.F) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 8 {
		b, _ := proto.Marshal(randomChunk(rng))
		f.Add(b)
	}
	f.Add([]byte{0x0a, 0x02, 0xff, 0xfe})
	codec := newSubmitCodec()
	f.Fuzz(func(t *testing.T, b []byte) {
		want := new(pb.ReportChunk)
		werr := proto.Unmarshal(b, want)
		got := new(pb.ReportChunk)
		gerr := codec.Unmarshal(mem.BufferSlice{mem.SliceBuffer(bytes.Clone(b))}, got)
		if (werr == nil) != (gerr == nil) || (werr == nil && !proto.Equal(got, want)) {
			t.Fatalf("%x: codec %v, %v; protobuf %v, %v", b, got, gerr, want, werr)
		}
	})
}

// An open round keeps accepted reports in its own blocks, keepReports
// reports (at most those still expected) at a time: a kept report is a
// copy (changing the message it came in changes nothing), capped at its
// length; a report the Service refuses and unkeep gives back takes no
// memory, so a client sending the same report again and again does not
// grow the round's memory.
func TestOpenRoundKeep(t *testing.T) {
	const size = 75
	r := &openRound{size: size, expected: 1000}
	msg := bytes.Repeat([]byte{7}, size)
	kept := r.keep(msg)
	msg[0] = 9
	if kept[0] != 7 || len(kept) != size || cap(kept) != size {
		t.Fatalf("kept %v (len %d cap %d): not a capped copy", kept[:1], len(kept), cap(kept))
	}
	if cap(r.block) != keepReports*size {
		t.Fatalf("block of %d bytes, want %d", cap(r.block), keepReports*size)
	}
	r.accepted = 1
	block := &r.block[:1][0]
	for range 10 * keepReports {
		again := r.keep(msg)
		r.unkeep(again) // refused: a duplicate
	}
	if len(r.block) != size || &r.block[:1][0] != block {
		t.Fatalf("after refused reports: block len %d (want %d), reallocated %v", len(r.block), size, &r.block[:1][0] != block)
	}
	// The last block is sized by the reports still expected.
	r = &openRound{size: size, expected: 3}
	r.keep(msg)
	if cap(r.block) != 3*size {
		t.Fatalf("block of %d bytes for 3 expected reports, want %d", cap(r.block), 3*size)
	}
}

// sendChunks sends every report once, in order, in chunks of at most
// chunkReports: reports arriving one by one (here one every 100 µs, over
// 100 ms) go in a few chunks, one per linger (10 ms) or so, not one
// message per report; reports already waiting go in full chunks; what is
// left when the channel closes is sent; after a failed send nothing more
// is sent and the error is returned.
func TestSendChunks(t *testing.T) {
	type sent struct {
		chunks, reports int
		took            time.Duration
	}
	run := func(n int, gap time.Duration, fail int) (sent, []int64, error) {
		start := time.Now()
		out := make(chan *pb.Report, 2*chunkReports)
		go func() {
			for i := range n {
				out <- &pb.Report{Client: int64(i)}
				if gap > 0 {
					time.Sleep(gap)
				}
			}
			close(out)
		}()
		var s sent
		var order []int64
		err := sendChunks(out, "r", 3, func(c *pb.ReportChunk) error {
			if c.Run != "r" || c.Round != 3 || len(c.Reports) == 0 || len(c.Reports) > chunkReports {
				t.Errorf("chunk of run %q round %d with %d reports", c.Run, c.Round, len(c.Reports))
			}
			s.chunks++
			if s.chunks == fail {
				return io.EOF
			}
			s.reports += len(c.Reports)
			for _, r := range c.Reports {
				order = append(order, r.Client)
			}
			return nil
		}, 10*time.Millisecond)
		s.took = time.Since(start)
		return s, order, err
	}
	s, order, err := run(1000, 100*time.Microsecond, 0)
	if err != nil || s.reports != 1000 || !slices.Equal(order, seq(1000)) {
		t.Fatalf("slow arrivals: %+v, %v; reports out of order or lost", s, err)
	}
	// 1,000 reports over >= 100 ms (longer on a loaded machine): at most
	// one chunk per 10 ms, and the last.
	if max := int(s.took/(10*time.Millisecond)) + 2; s.chunks > max || s.chunks > 500 {
		t.Errorf("slow arrivals: %d chunks for 1,000 reports over %v, want at most %d (one per 10 ms)", s.chunks, s.took, max)
	}
	s, order, err = run(3*chunkReports+5, 0, 0)
	if err != nil || s.reports != 3*chunkReports+5 || !slices.Equal(order, seq(3*chunkReports+5)) {
		t.Fatalf("fast arrivals: %+v, %v", s, err)
	}
	if s.chunks > 3*chunkReports+5 || s.chunks < 4 {
		t.Errorf("fast arrivals: %d chunks", s.chunks)
	}
	s, _, err = run(2000, 0, 2)
	if err != io.EOF || s.chunks != 2 {
		t.Errorf("a failed second send: %d sends, %v; want 2 and the error", s.chunks, err)
	}
}

func seq(n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(i)
	}
	return out
}
