package node

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	gproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"

	"github.com/shuffledp/shuffledp/ledger"
	pb "github.com/shuffledp/shuffledp/proto/shuffledp/v1"
	"github.com/shuffledp/shuffledp/protocol"
)

// preEncoded is a client-side gRPC codec that sends a ReportChunk as the
// bytes encoded for it beforehand (outside the benchmark's timer), and is
// protobuf's codec for everything else, so that a benchmark of the
// shuffler's receive path does not also time the test client's encoding.
type preEncoded struct {
	encoding.CodecV2
	mu    sync.Mutex
	bytes map[*pb.ReportChunk][]byte
}

func (c *preEncoded) Name() string { return gproto.Name }

func (c *preEncoded) Marshal(v any) (mem.BufferSlice, error) {
	if m, ok := v.(*pb.ReportChunk); ok {
		c.mu.Lock()
		b, ok := c.bytes[m]
		c.mu.Unlock()
		if ok {
			return mem.BufferSlice{mem.SliceBuffer(b)}, nil
		}
	}
	return c.CodecV2.Marshal(v)
}

// BenchmarkShufflerReports measures the shuffler's per-report path at the
// NeurIPS'21 Fig. 3 scale (k = 10,000 of n = 60,000, 75-byte sealed
// reports): one op is one report, in rounds of k streamed over gRPC with
// TLS on loopback in chunks of chunkReports (the client pool's chunk),
// each received and decoded, authenticated (HMAC token), header-checked
// and kept, then per round the release: the durable claim of the round's
// report ids with the debit (SQLite, one transaction), Fisher–Yates, the
// batch's copy and SHA-256 and its forward to a stand-in server. The test
// client's chunks are encoded before the timer (preEncoded) and the report
// ids are fresh per round, so what is timed in this process beyond the
// shuffler is the client's TLS writes and the stand-in server's receive.
// cpu-ns/report is the process's user+system CPU per report (the machine
// may be shared: prefer it to ns/op, which is wall time); allocs/report
// and B/report are the process's allocations per report
// (runtime.MemStats over the timed rounds).
//
//	go test ./node -run '^$' -bench ShufflerReports -benchtime 200000x -count 6
func BenchmarkShufflerReports(b *testing.B) { benchShufflerReports(b, chunkReports) }

// BenchmarkShufflerReportsSmallChunks is BenchmarkShufflerReports with
// chunks of 64 reports, about what a client pool's chunk held under `up`
// when its linger (chunkLinger) was 10 ms:
// eight times the messages per report, so the per-message costs (gRPC's
// receive and HTTP/2 frames, flow control, the decode's buffers) weigh
// eight times more.
func BenchmarkShufflerReportsSmallChunks(b *testing.B) { benchShufflerReports(b, 64) }

func benchShufflerReports(b *testing.B, per int) {
	const n, k = 60000, 10000
	st, err := ledger.OpenSQLite(context.Background(), filepath.Join(b.TempDir(), ledger.FileName), ledger.SQLiteOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	rounds := (b.N + k - 1) / k
	r := newAttackRig(b, rigOptions{n: n, k: k, rounds: rounds + 1, store: st})
	ctx := context.Background()
	// Registered as a client pool does, in messages of registerChunk
	// clients (one message of 60,000 exceeds the shuffler's limit).
	w, err := sendRegistration(asClient(ctx, r.enr, 0), r.shuf, r.run.Run, 0, n, registerChunk, r.enr.Token, grpc.WaitForReady(true))
	if err != nil {
		b.Fatal(err)
	}
	tmpl := r.seal(1, 0)
	ids := rand.NewChaCha8([32]byte{1})
	codec := &preEncoded{CodecV2: encoding.GetCodecV2(gproto.Name), bytes: map[*pb.ReportChunk][]byte{}}
	chunks := func(a *pb.Assignment) []*pb.ReportChunk {
		clear(codec.bytes)
		var out []*pb.ReportChunk
		for i := 0; i < len(a.Clients); i += per {
			c := &pb.ReportChunk{Run: r.run.Run, Round: a.Round}
			for _, cl := range a.Clients[i:min(i+per, len(a.Clients))] {
				s := append([]byte(nil), tmpl...)
				ids.Read(s[2 : 2+protocol.ReportIDSize])
				c.Reports = append(c.Reports, &pb.Report{Client: cl, Token: r.enr.Token(cl), Sealed: s})
			}
			enc, err := proto.Marshal(c)
			if err != nil {
				b.Fatal(err)
			}
			codec.bytes[c] = enc
			out = append(out, c)
		}
		return out
	}
	send := func(round int64, cs []*pb.ReportChunk) {
		s, err := r.shuf.Submit(asClient(ctx, r.enr, 0), grpc.ForceCodecV2(codec))
		if err != nil {
			b.Fatal(err)
		}
		for _, c := range cs {
			if err := s.Send(c); err != nil {
				b.Fatal(err)
			}
		}
		ack, err := s.CloseAndRecv()
		if err != nil || ack.Accepted != k {
			b.Fatalf("round %d: accepted %d of %d, %v", round, ack.GetAccepted(), k, err)
		}
		// The release ends when the stand-in server has the batch.
		for len(r.srv.received()) < int(round) {
			time.Sleep(50 * time.Microsecond)
		}
	}
	// One round untimed: registration, first model, ledger set-up.
	a := recv(b, w)
	send(a.Round, chunks(a))
	var cpu time.Duration
	var m0, m1 runtime.MemStats
	var mallocs, bytes uint64
	b.ResetTimer()
	for range rounds {
		b.StopTimer()
		a := recv(b, w)
		cs := chunks(a)
		runtime.ReadMemStats(&m0)
		c0 := cpuTime()
		b.StartTimer()
		send(a.Round, cs)
		b.StopTimer()
		cpu += cpuTime() - c0
		runtime.ReadMemStats(&m1)
		mallocs += m1.Mallocs - m0.Mallocs
		bytes += m1.TotalAlloc - m0.TotalAlloc
		b.StartTimer()
	}
	b.StopTimer()
	reports := float64(rounds * k)
	// ns/op is per report: b.N reports were asked for, rounds*k were sent.
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/reports, "ns/op")
	b.ReportMetric(float64(cpu.Nanoseconds())/reports, "cpu-ns/report")
	b.ReportMetric(reports/cpu.Seconds(), "reports/CPU-s")
	b.ReportMetric(float64(mallocs)/reports, "allocs/report")
	b.ReportMetric(float64(bytes)/reports, "B/report")
}
