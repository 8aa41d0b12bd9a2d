package node

import (
	"errors"
	"unicode/utf8"

	"google.golang.org/grpc/encoding"
	gproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	pb "github.com/shuffledp/shuffledp/proto/shuffledp/v1"
)

// submitCodec is the shuffler's gRPC codec: gRPC's protobuf codec for every
// message, except that a ReportChunk (the Submit stream's message, at
// k = 10,000 about 10,000 reports a round) is decoded by
// decodeReportChunk: the message is copied once out of gRPC's buffers, its
// reports are one array of pb.Report, and each report's token and sealed
// bytes are slices of that copy. protobuf's decoder allocates a message and
// two byte slices per report instead (the largest allocation site of the
// shuffler's receive path). The sealed bytes are opaque here as everywhere
// in the shuffler: they are sliced, never read; the shuffler copies an
// accepted report's bytes into its round's own memory (openRound.keep), so
// that a chunk's copy is garbage once the chunk is handled whatever it
// held. Anything decodeReportChunk does not expect (an unknown field, a
// field of another wire type, invalid UTF-8 in the run, a malformed
// varint or length) is handed to protobuf's decoder, whose result, or
// error, is the answer: the two decode every valid message alike
// (TestSubmitCodecMatchesProto, FuzzSubmitCodec).
type submitCodec struct{ encoding.CodecV2 }

func newSubmitCodec() submitCodec {
	return submitCodec{encoding.GetCodecV2(gproto.Name)}
}

// Name is protobuf's, so that peers see the usual content type.
func (submitCodec) Name() string { return gproto.Name }

// Unmarshal implements encoding.CodecV2.
func (c submitCodec) Unmarshal(data mem.BufferSlice, v any) error {
	switch m := v.(type) {
	case *pb.ReportChunk:
		buf := data.Materialize()
		if decodeReportChunk(buf, m, nil) == nil {
			return nil
		}
		proto.Reset(m)
		return proto.Unmarshal(buf, m)
	case *chunkReceiver:
		return m.decode(data)
	}
	return c.CodecV2.Unmarshal(data, v)
}

// chunkReceiver is the message a Submit stream receives its chunks into,
// one after another: the copy of a chunk's bytes and its array of reports
// are reused by the stream's next chunk instead of allocated for each
// (at k = 10,000 a round is 20 to 200 chunks of one client pool, about
// 1 MB of copies and 1 MB of reports a round that became garbage). The
// reuse is safe because nothing outlives the handling of a chunk: the
// Submit handler checks its reports and copies each accepted report's
// bytes into the round's own memory (openRound.keep), and receives the
// next chunk only after; a chunk's reports are never handed elsewhere.
// The buffer grows to the stream's largest chunk, which the receive limit
// (reportLimit) bounds, as it bounds each chunk's copy without reuse. A
// chunkReceiver belongs to one stream and is never shared (a stream whose
// deadline passed mid-read may still be writing into it after its handler
// returned).
type chunkReceiver struct {
	pb.ReportChunk
	buf     []byte
	reports []pb.Report
	ptrs    []*pb.Report
}

// decode receives data into r, reusing r's buffers; what protobuf's
// decoder decodes (anything decodeReportChunk does not expect) is its own.
func (r *chunkReceiver) decode(data mem.BufferSlice) error {
	n := data.Len()
	if cap(r.buf) < n {
		r.buf = make([]byte, n)
	}
	r.buf = r.buf[:n]
	data.CopyTo(r.buf)
	proto.Reset(&r.ReportChunk)
	if decodeReportChunk(r.buf, &r.ReportChunk, r) == nil {
		return nil
	}
	proto.Reset(&r.ReportChunk)
	return proto.Unmarshal(r.buf, &r.ReportChunk)
}

// reportSlots returns n empty reports for a chunk: reused from r's earlier
// chunks (each field reset) where r is not nil, else newly allocated.
func (r *chunkReceiver) reportSlots(n int) []*pb.Report {
	if r == nil {
		reports := make([]pb.Report, n)
		ptrs := make([]*pb.Report, n)
		for i := range reports {
			ptrs[i] = &reports[i]
		}
		return ptrs
	}
	if cap(r.reports) < n {
		r.reports = make([]pb.Report, n)
		r.ptrs = make([]*pb.Report, n)
		for i := range r.reports {
			r.ptrs[i] = &r.reports[i]
		}
	}
	ptrs := r.ptrs[:n]
	for _, p := range ptrs {
		proto.Reset(p)
	}
	return ptrs
}

// errUnexpected makes decodeReportChunk hand a message to protobuf.
var errUnexpected = errors.New("report chunk: not in the expected form")

// decodeReportChunk decodes buf, a ReportChunk in protobuf's wire format,
// into m (a new or reset message), the reports' bytes aliasing buf, the
// reports taken from reuse (chunkReceiver.reportSlots; nil: new ones). It
// returns errUnexpected for anything but the fields of ReportChunk, Report
// and ClientCredential with their own wire types; m is then to be reset.
func decodeReportChunk(buf []byte, m *pb.ReportChunk, reuse *chunkReceiver) error {
	n := 0 // reports, counted first so that they are one allocation
	for b := buf; len(b) > 0; {
		num, typ, l := protowire.ConsumeField(b)
		if l < 0 {
			return errUnexpected
		}
		if num == 3 && typ == protowire.BytesType {
			n++
		}
		b = b[l:]
	}
	if n > 0 {
		m.Reports = reuse.reportSlots(n)
	}
	i := 0
	for b := buf; len(b) > 0; {
		num, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return errUnexpected
		}
		b = b[l:]
		switch {
		case num == 1 && typ == protowire.BytesType:
			v, l := protowire.ConsumeBytes(b)
			if l < 0 || !utf8.Valid(v) {
				return errUnexpected
			}
			m.Run, b = string(v), b[l:]
		case num == 2 && typ == protowire.VarintType:
			v, l := protowire.ConsumeVarint(b)
			if l < 0 {
				return errUnexpected
			}
			m.Round, b = int64(v), b[l:]
		case num == 3 && typ == protowire.BytesType:
			v, l := protowire.ConsumeBytes(b)
			if l < 0 || decodeReport(v, m.Reports[i]) != nil {
				return errUnexpected
			}
			i, b = i+1, b[l:]
		case num == 4 && typ == protowire.BytesType:
			v, l := protowire.ConsumeBytes(b)
			if l < 0 {
				return errUnexpected
			}
			d := new(pb.ClientCredential)
			if decodeCredential(v, d) != nil {
				return errUnexpected
			}
			m.Declined, b = append(m.Declined, d), b[l:]
		default:
			return errUnexpected
		}
	}
	return nil
}

// decodeReport decodes a Report's fields from b into r, aliasing b.
func decodeReport(b []byte, r *pb.Report) error {
	for len(b) > 0 {
		num, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return errUnexpected
		}
		b = b[l:]
		switch {
		case num == 1 && typ == protowire.VarintType:
			v, l := protowire.ConsumeVarint(b)
			if l < 0 {
				return errUnexpected
			}
			r.Client, b = int64(v), b[l:]
		case (num == 2 || num == 3) && typ == protowire.BytesType:
			v, l := protowire.ConsumeBytes(b)
			if l < 0 {
				return errUnexpected
			}
			v = v[:len(v):len(v)] // an append to one never writes over the next
			if len(v) == 0 {
				v = nil // as protobuf decodes an empty proto3 bytes field
			}
			if num == 2 {
				r.Token = v
			} else {
				r.Sealed = v
			}
			b = b[l:]
		default:
			return errUnexpected
		}
	}
	return nil
}

// decodeCredential decodes a ClientCredential's fields from b into c.
func decodeCredential(b []byte, c *pb.ClientCredential) error {
	for len(b) > 0 {
		num, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return errUnexpected
		}
		b = b[l:]
		switch {
		case num == 1 && typ == protowire.VarintType:
			v, l := protowire.ConsumeVarint(b)
			if l < 0 {
				return errUnexpected
			}
			c.Client, b = int64(v), b[l:]
		case num == 2 && typ == protowire.BytesType:
			v, l := protowire.ConsumeBytes(b)
			if l < 0 {
				return errUnexpected
			}
			if c.Token = v[:len(v):len(v)]; len(v) == 0 {
				c.Token = nil
			}
			b = b[l:]
		default:
			return errUnexpected
		}
	}
	return nil
}
