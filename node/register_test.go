package node

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/shuffledp/shuffledp/pki"
	pb "github.com/shuffledp/shuffledp/proto/shuffledp/v1"
)

// workCall opens a Work stream on shuf, sends req as its only message
// and closes the sending side (a refusal shows in the stream's Recv).
func workCall(ctx context.Context, shuf pb.ShufflerClient, req *pb.WorkRequest, opts ...grpc.CallOption) (workStream, error) {
	w, err := shuf.Work(ctx, opts...)
	if err != nil {
		return nil, err
	}
	if err := w.Send(req); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if err := w.CloseSend(); err != nil {
		return nil, err
	}
	return w, nil
}

// peakMeter bounds a process's live heap over a Work stream's
// registration: at every mark (the stream's start, before each message is
// read, when the registration is acknowledged) it collects garbage and
// reads the live heap and the bytes allocated so far. The live heap at any
// moment between two marks is at most the live heap at the first plus all
// that was allocated until the second (whether kept or garbage), so the
// largest such sum is an upper bound on the peak: one a single message
// naming every client cannot pass under, since decoding it allocates all
// of it between two marks.
type peakMeter struct {
	mu          sync.Mutex
	live, total uint64 // at the last mark
	peak        uint64
}

func (m *peakMeter) mark() {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.total > 0 {
		m.peak = max(m.peak, m.live+(ms.TotalAlloc-m.total))
	}
	m.peak = max(m.peak, ms.HeapAlloc)
	m.live, m.total = ms.HeapAlloc, ms.TotalAlloc
}

// meteredStream marks m before each message is read and when the
// registration is acknowledged; registered is then the number of clients
// the shuffler holds.
type meteredStream struct {
	grpc.ServerStream
	m          *peakMeter
	s          *Shuffler
	registered chan int
}

func (ms *meteredStream) RecvMsg(v any) error {
	ms.m.mark()
	return ms.ServerStream.RecvMsg(v)
}

func (ms *meteredStream) SendHeader(md metadata.MD) error {
	ms.m.mark()
	ms.s.mu.Lock()
	n := len(ms.s.workers)
	ms.s.mu.Unlock()
	ms.registered <- n
	return ms.ServerStream.SendHeader(md)
}

// registrationPeak serves a bare shuffler of a run of n clients over
// gRPC on loopback, has a child process (TestRegistrationPeakClient)
// register clients 0..n-1 on one Work stream in messages of chunk
// clients through sendRegistration, the client pool's function, and
// returns the shuffler process's peak live heap during the registration
// (peakMeter), less its live heap before it, per client. The client is
// another process so that only the shuffler's memory is measured.
//
// The server admits messages of any size up to recvCeiling: the
// shuffler's own limit (reportLimit) refuses a Work message of more than
// about registerChunk clients, which TestWorkMessageLimit checks; here
// the negative control measures what one would cost if it were admitted.
func registrationPeak(t testing.TB, n, chunk int) float64 {
	e, secret := randomEnroller(t)
	s := bareShuffler(e, n)
	m := &peakMeter{}
	registered := make(chan int, 1)
	// WaitForHandlers: Stop returns once the Work handler did, so that
	// nothing of this shuffler is live in the next measurement.
	g := grpc.NewServer(grpc.MaxRecvMsgSize(recvCeiling), grpc.WaitForHandlers(true),
		grpc.StreamInterceptor(func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			return h(srv, &meteredStream{ServerStream: ss, m: m, s: s, registered: registered})
		}))
	l := serveShuffler(t, g, s)
	defer g.Stop()
	runtime.GC() // what sync.Pools held before (gRPC's buffers) is freed by the mark's
	m.mark()
	base := m.live
	cmd := exec.Command(os.Args[0], "-test.run=^TestRegistrationPeakClient$", "-test.count=1")
	cmd.Env = append(os.Environ(), "SHUFFLEDP_PEAK_CLIENT="+l.Addr().String(), "PEAK_SECRET="+hex.EncodeToString(secret),
		fmt.Sprintf("PEAK_N=%d", n), fmt.Sprintf("PEAK_CHUNK=%d", chunk))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-registered:
		if got != n {
			t.Fatalf("%d clients registered, want %d", got, n)
		}
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("no registration in a minute:\n%s", out.String())
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("client process: %v\n%s", err, out.String())
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return float64(m.peak-base) / float64(n)
}

// TestRegistrationPeakClient is the client process of
// registrationPeak: it registers PEAK_N clients in messages of PEAK_CHUNK
// at the shuffler at SHUFFLEDP_PEAK_CLIENT and exits once the shuffler
// acknowledged the registration.
func TestRegistrationPeakClient(t *testing.T) {
	addr := os.Getenv("SHUFFLEDP_PEAK_CLIENT")
	if addr == "" {
		t.Skip("the client process of TestRegistrationPeakPerClient")
	}
	secret, _ := hex.DecodeString(os.Getenv("PEAK_SECRET"))
	e, err := pki.NewEnroller(secret)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.ParseInt(os.Getenv("PEAK_N"), 10, 64)
	chunk, _ := strconv.ParseInt(os.Getenv("PEAK_CHUNK"), 10, 64)
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	w, err := sendRegistration(ctx, pb.NewShufflerClient(conn), "mem", 0, n, chunk, e.Token, grpc.WaitForReady(true))
	if err != nil {
		t.Fatal(err)
	}
	md, err := w.Header()
	if err != nil {
		t.Fatal(err)
	}
	if got := md.Get(registeredKey); len(got) != 1 || got[0] != strconv.FormatInt(n, 10) {
		t.Fatalf("registered %v, want %d", got, n)
	}
}

// TestRegistrationPeakPerClient bounds the shuffler's peak heap while a
// client pool registers, not only what it keeps: 100,000 clients
// registered by another process through the client pool's own function
// (messages of registerChunk) over gRPC, the shuffler's peak live heap
// bounded from above by peakMeter. The bound is maxShufflerBytesPerClient
// per client, the shuffler node's share of the 200 bytes per enrolled
// client (beyond the credentials, which the shuffler does not store).
// Expected well under it: the shuffler keeps ~23 bytes per client
// (TestShufflerMemoryPerClient); one message read and checked allocates
// ~1 MB (~10 bytes per client at this n, less at a larger one); and the
// last step, which enters every client in the client-to-stream map at
// once, counts the map's final tables and the smaller ones it outgrew:
// about 60 bytes per client measured, against 152. The negative control
// registers the same clients in one message, as pools did before, and
// must exceed the bound (~240 bytes measured: the message's wire bytes
// and its decoded credentials, all live at once). What the bound covers is
// live memory: between collections Go's heap also holds garbage, up to
// GOGC percent of the live heap (GOMEMLIMIT caps it), which this test does
// not count and BENCHMARKS.md measures at a million clients.
func TestRegistrationPeakPerClient(t *testing.T) {
	const n = 100_000
	chunked := registrationPeak(t, n, registerChunk)
	whole := registrationPeak(t, n, n)
	t.Logf("shuffler peak live heap per registered client: %.1f bytes in messages of %d, %.1f bytes in one message", chunked, registerChunk, whole)
	if chunked > maxShufflerBytesPerClient {
		t.Errorf("registration in messages of %d: %.1f bytes per client at the peak, more than %d", registerChunk, chunked, maxShufflerBytesPerClient)
	}
	if whole <= maxShufflerBytesPerClient {
		t.Errorf("negative control: registration in one message measured %.1f bytes per client at the peak, within the bound %d: the measurement would not catch it", whole, maxShufflerBytesPerClient)
	}
}

// BenchmarkRegistrationPeakMillion is TestRegistrationPeakPerClient at
// 1,000,000 clients: the shuffler's peak live heap per client, registered
// in messages of registerChunk (chunked) and in one message (whole).
func BenchmarkRegistrationPeakMillion(b *testing.B) {
	for b.Loop() {
		b.ReportMetric(registrationPeak(b, 1_000_000, registerChunk), "chunked-bytes/client")
		b.ReportMetric(registrationPeak(b, 1_000_000, 1_000_000), "whole-bytes/client")
	}
}

// listStream is the server side of a Work stream whose caller sends msgs
// and closes; once the registration is acknowledged it blocks until its
// context ends.
type listStream struct {
	grpc.ServerStream
	ctx    context.Context
	msgs   []*pb.WorkRequest
	header chan string
}

func (l *listStream) SendHeader(md metadata.MD) error {
	l.header <- strings.Join(md.Get(registeredKey), ",")
	return nil
}
func (l *listStream) Send(*pb.Assignment) error { return nil }
func (l *listStream) Context() context.Context  { return l.ctx }

func (l *listStream) Recv() (*pb.WorkRequest, error) {
	if len(l.msgs) == 0 {
		return nil, io.EOF
	}
	m := l.msgs[0]
	l.msgs = l.msgs[1:]
	return m, nil
}

// TestRegistrationInMessages: a Work stream's clients are checked message
// by message and registered together once the caller closed its side; any
// invalid message (a credential, the run, the population exceeded over
// the messages, a message naming no client, no message at all) refuses
// the whole registration, and nothing of it is registered.
func TestRegistrationInMessages(t *testing.T) {
	e, err := pki.NewEnroller(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	const n = 10
	msg := func(run string, lo, hi int64) *pb.WorkRequest {
		req := &pb.WorkRequest{Run: run}
		for c := lo; c < hi; c++ {
			req.Clients = append(req.Clients, &pb.ClientCredential{Client: c, Token: e.Token(c)})
		}
		return req
	}
	forged := msg("mem", 6, 8)
	forged.Clients[1].Token = e.Token(3)
	for _, tc := range []struct {
		name string
		msgs []*pb.WorkRequest
		code codes.Code // codes.OK: registered
		want []int64    // the clients registered
	}{
		{"three messages", []*pb.WorkRequest{msg("mem", 0, 4), msg("mem", 4, 8), msg("mem", 8, 10)}, codes.OK, []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}},
		{"out of order", []*pb.WorkRequest{msg("mem", 5, 7), msg("mem", 1, 3)}, codes.OK, []int64{1, 2, 5, 6}},
		{"forged credential in the last message", []*pb.WorkRequest{msg("mem", 0, 6), forged}, codes.Unauthenticated, nil},
		{"another run in the second message", []*pb.WorkRequest{msg("mem", 0, 2), msg("other", 2, 4)}, codes.NotFound, nil},
		{"more than the population over the messages", []*pb.WorkRequest{msg("mem", 0, 8), msg("mem", 0, 8)}, codes.InvalidArgument, nil},
		{"a client beyond the population", []*pb.WorkRequest{msg("mem", 9, 11)}, codes.Unauthenticated, nil},
		{"an empty message after clients", []*pb.WorkRequest{msg("mem", 0, 2), {Run: "mem"}}, codes.Unauthenticated, nil},
		{"no message", nil, codes.Unauthenticated, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := bareShuffler(e, n)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			st := &listStream{ctx: ctx, msgs: tc.msgs, header: make(chan string, 1)}
			done := make(chan error, 1)
			go func() { done <- s.Work(st) }()
			var err error
			select {
			case h := <-st.header:
				if h != strconv.Itoa(len(tc.want)) {
					t.Errorf("registered header %q, want %d", h, len(tc.want))
				}
				s.mu.Lock()
				var got []int64
				for c := range s.workers {
					got = append(got, c)
				}
				s.mu.Unlock()
				slices.Sort(got)
				if !slices.Equal(got, tc.want) {
					t.Errorf("registered %v, want %v", got, tc.want)
				}
				cancel()
				err = <-done
				if err == nil {
					t.Error("the stream ended without an error when its context ended")
				}
				err = nil
			case err = <-done:
			}
			if status.Code(err) != tc.code {
				t.Fatalf("Work: %v, want code %v", err, tc.code)
			}
			s.mu.Lock()
			defer s.mu.Unlock()
			if len(s.workers) != 0 {
				t.Errorf("%d clients still registered after the stream ended", len(s.workers))
			}
		})
	}
}

// TestWorkMessageLimit: the shuffler's message limit (reportLimit, as its
// gRPC server sets it) admits a client pool's Work messages of
// registerChunk clients with the largest ids and refuses one message
// naming a pool's range (ResourceExhausted, before the handler sees it),
// so what a registration makes the shuffler decode at once does not grow
// with the range, whoever sends it.
func TestWorkMessageLimit(t *testing.T) {
	e, err := pki.NewEnroller(bytes.Repeat([]byte{9}, 32))
	if err != nil {
		t.Fatal(err)
	}
	const n = 1 << 40 // ids of the most bytes a run's clients could have here
	s := bareShuffler(e, n)
	g := grpc.NewServer(grpc.MaxRecvMsgSize(reportLimit(s.run)))
	l := serveShuffler(t, g, s)
	defer g.Stop()
	conn, err := grpc.NewClient(l.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	shuf := pb.NewShufflerClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	lo := int64(n - 2*registerChunk - 1)
	w, err := sendRegistration(ctx, shuf, "mem", lo, n, registerChunk, e.Token)
	if err != nil {
		t.Fatal(err)
	}
	md, err := w.Header()
	if got := md.Get(registeredKey); err != nil || len(got) != 1 || got[0] != strconv.Itoa(2*registerChunk+1) {
		t.Fatalf("messages of %d clients: registered %v, %v; want %d", registerChunk, got, err, 2*registerChunk+1)
	}

	whole := &pb.WorkRequest{Run: "mem"}
	for c := lo; c < n; c++ {
		whole.Clients = append(whole.Clients, &pb.ClientCredential{Client: c, Token: e.Token(c)})
	}
	w, err = workCall(ctx, shuf, whole)
	if err == nil {
		_, err = w.Recv()
	}
	if status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("one message of %d clients: %v, want ResourceExhausted", len(whole.Clients), err)
	}
}

// randomEnroller is an enroller of a fresh random secret, and the secret
// (for a child process that must mint the same credentials).
func randomEnroller(t testing.TB) (*pki.Enroller, []byte) {
	secret := make([]byte, 32)
	rand.Read(secret)
	e, err := pki.NewEnroller(secret)
	if err != nil {
		t.Fatal(err)
	}
	return e, secret
}

// serveShuffler registers s on g and serves it on a loopback port of its
// own; the caller stops g.
func serveShuffler(t testing.TB, g *grpc.Server, s pb.ShufflerServer) net.Listener {
	pb.RegisterShufflerServer(g, s)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go g.Serve(l)
	return l
}
