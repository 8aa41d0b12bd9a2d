package node

import (
	"context"
	"io"
	"runtime"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/shuffledp/shuffledp/pki"
	pb "github.com/shuffledp/shuffledp/proto/shuffledp/v1"
	"github.com/shuffledp/shuffledp/protocol"
)

// headerStream is the server side of a Work stream whose caller registers
// clients 0..n-1 in messages of chunk clients (each built when the
// shuffler reads it, valid credentials), reports when the registration
// was acknowledged and then blocks until its context ends.
type headerStream struct {
	grpc.ServerStream
	ctx         context.Context
	header      chan struct{}
	e           *pki.Enroller
	run         string
	next, n, ch int64
}

func (h *headerStream) SendHeader(metadata.MD) error { close(h.header); return nil }
func (h *headerStream) Send(*pb.Assignment) error    { return nil }
func (h *headerStream) Context() context.Context     { return h.ctx }

func (h *headerStream) Recv() (*pb.WorkRequest, error) {
	if h.next >= h.n {
		return nil, io.EOF
	}
	m := min(h.ch, h.n-h.next)
	req := &pb.WorkRequest{Run: h.run, Clients: make([]*pb.ClientCredential, m)}
	for i := range req.Clients {
		c := h.next + int64(i)
		req.Clients[i] = &pb.ClientCredential{Client: c, Token: h.e.Token(c)}
	}
	h.next += m
	return req, nil
}

// registeredBytesPerClient registers n clients (valid credentials, in
// messages of registerChunk) on one Work stream of a shuffler of a run of
// n clients and returns the heap the shuffler holds per registered client
// once registered (runtime.MemStats.HeapAlloc after a garbage collection,
// against the heap before the stream started).
func registeredBytesPerClient(t testing.TB, n int) float64 {
	e, _ := randomEnroller(t)
	s := bareShuffler(e, n)
	var before, after runtime.MemStats
	runtime.GC() // twice: what sync.Pools held (gRPC's buffers) is freed by the second
	runtime.GC()
	runtime.ReadMemStats(&before)
	ctx, cancel := context.WithCancel(context.Background())
	st := &headerStream{ctx: ctx, header: make(chan struct{}), e: e, run: "mem", n: int64(n), ch: registerChunk}
	done := make(chan error, 1)
	go func() { done <- s.Work(st) }()
	select {
	case <-st.header:
	case err := <-done:
		t.Fatalf("Work ended before registering: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("Work did not register in a minute")
	}
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&after)
	s.mu.Lock()
	got := len(s.workers)
	s.mu.Unlock()
	if got != n {
		t.Fatalf("%d clients registered, want %d", got, n)
	}
	cancel()
	<-done
	return (float64(after.HeapAlloc) - float64(before.HeapAlloc)) / float64(n)
}

// maxShufflerBytesPerClient bounds the shuffler node's heap per registered
// client (beyond the credentials, which the shuffler does not store: a
// token is an HMAC of the client's index, checked with the secret): 200
// bytes per enrolled client for the whole shuffler, less the 48 that
// package shuffler's TestServiceMemoryPerClient allows its Service per
// client of the population.
const maxShufflerBytesPerClient = 200 - 48

// TestShufflerMemoryPerClient registers 100,000 clients on one Work stream
// (in messages of registerChunk, as a client pool does) and checks the shuffler's retained heap per client against
// maxShufflerBytesPerClient.
func TestShufflerMemoryPerClient(t *testing.T) {
	per := registeredBytesPerClient(t, 100_000)
	t.Logf("%.1f bytes of shuffler heap per registered client", per)
	if per > maxShufflerBytesPerClient {
		t.Fatalf("%.1f bytes per registered client, more than %d", per, maxShufflerBytesPerClient)
	}
}

// BenchmarkShufflerMemoryMillion is TestShufflerMemoryPerClient at
// 1,000,000 clients: the bytes/client metric.
func BenchmarkShufflerMemoryMillion(b *testing.B) {
	for b.Loop() {
		b.ReportMetric(registeredBytesPerClient(b, 1_000_000), "bytes/client")
	}
}

// bareShuffler is a Shuffler of a run "mem" of n clients with only what
// Work needs: its run, the enroller that checks credentials, ready.
func bareShuffler(e *pki.Enroller, n int) *Shuffler {
	ready := make(chan struct{})
	close(ready)
	return &Shuffler{cfg: ShufflerConfig{Enroller: e}, ready: ready, regCh: make(chan struct{}),
		workers: map[int64]*worker{}, stopping: make(chan struct{}),
		run: protocol.RunConfig{Run: "mem", Population: n}, local: protocol.RunConfig{Run: "mem", Population: n}}
}
