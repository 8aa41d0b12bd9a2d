package node

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"

	"github.com/shuffledp/shuffledp/pki"
	pb "github.com/shuffledp/shuffledp/proto/shuffledp/v1"
	"github.com/shuffledp/shuffledp/protocol"
)

// rpcRoles maps every RPC to the roles allowed to call it. The TLS
// handshake already refused any peer whose role may call none of a
// listener's RPCs (pki.Callers); this is the per-call check among the
// others, made when the call's headers arrive, before a byte of its
// message is read. An RPC missing here is refused.
var rpcRoles = map[string][]string{
	pb.Server_GetRun_FullMethodName:      {pki.RoleShuffler, pki.RoleClient},
	pb.Server_GetModel_FullMethodName:    {pki.RoleShuffler},
	pb.Server_SubmitBatch_FullMethodName: {pki.RoleShuffler},
	pb.Server_Stop_FullMethodName:        {pki.RoleShuffler},
	pb.Shuffler_Work_FullMethodName:      {pki.RoleClient},
	pb.Shuffler_Submit_FullMethodName:    {pki.RoleClient},
}

// Limits of every node's gRPC server.
const (
	// maxStreams bounds the calls in flight on one connection (a client
	// pool holds a Work stream and one Submit stream at a time; the
	// shuffler a model poll, a batch and a stop).
	maxStreams = 16
	// DefaultMaxConns bounds a listener's open connections (beyond it new
	// ones are closed at once).
	DefaultMaxConns = 1024
	// handshakeTimeout bounds a connection's TLS handshake.
	handshakeTimeout = 10 * time.Second
	// DefaultFirstMessage bounds the wait for a stream's first message
	// (its credentials), and for a unary call's request.
	DefaultFirstMessage = 10 * time.Second
	// maxHeaderList bounds the header list of every call a node serves
	// (HTTP/2 SETTINGS_MAX_HEADER_LIST_SIZE: the sum over the fields of
	// name, value and 32 bytes; gRPC's own default is 16 MiB, which lets
	// a peer make a node hold 16 MiB per stream before any check). The
	// largest a node sends is ~400 bytes (a Submit call with its client
	// credential, measured over the node tests); gRPC's next default, 8
	// KiB, leaves twenty times that. A longer list resets the stream (a
	// field longer than it, the connection) as it is decoded, before the
	// role and credential checks, keeping none of it.
	maxHeaderList = 8 << 10
	// dialHeaderList bounds the header list (headers and trailers, with
	// the status message) a node accepts in the replies to its calls.
	dialHeaderList = 16 << 10
	// maxWaitingClientCalls bounds a listener's calls from the client
	// role (which needs no credential for GetRun) that wait for their
	// request or first message: each holds its decoded headers (at most
	// maxHeaderList) and a goroutine, ~25 KiB, until the first-message
	// wait ends it, so 50 connections of 16 such calls held 20 MiB; past
	// this many, further ones are refused (ResourceExhausted) as their
	// headers arrive. An honest call's request follows its headers at
	// once; the shuffler's calls are never counted.
	maxWaitingClientCalls = 256
	// connReadBuffer is each connection's read buffer (gRPC's default,
	// 32 KiB, was most of an idle connection's ~70 KiB: 1,000 idle
	// connections from a peer without a credential held 70 MiB; a read
	// of a whole frame, up to 16 KiB, bypasses the buffer). With
	// grpc.SharedWriteBuffer an idle connection holds no write buffer.
	connReadBuffer = 8 << 10
	// minRecvRate is the slowest a request message may arrive: a unary
	// call's request must be read within the first-message wait plus one
	// second per MiB of the largest request its method takes
	// (bulkUnary).
	minRecvRate = 1 << 20
	// msgMargin is added to every message limit computed from the run
	// (field tags, lengths, the run name, ids).
	msgMargin = 64 << 10
	// specLimit bounds a run specification or a small reply.
	specLimit = 1 << 20
	// sendLimit bounds what a node sends (it built the message itself).
	sendLimit = 256 << 20
	// recvCeiling bounds every receive limit whatever the run says: the
	// run's configuration comes from the untrusted server, which must not
	// be able to lift the shuffler's or the clients' limits at will.
	recvCeiling = 256 << 20
	// submitWindow is the HTTP/2 flow-control window of each stream on
	// the shuffler's listener, fixed (serverOptions, serverLimits.window).
	// gRPC's default starts at 64 KB and grows with its bandwidth-delay
	// estimate up to 16 MB: to estimate it the receiver pings the sender
	// whenever data arrives and no ping is out, which for a client pool's
	// chunks, trickling in as its clients compute, is a ping, its answer
	// and a window update per chunk (three more TLS records, syscalls and
	// wake-ups on the shuffler for each chunk received). A fixed window
	// sends no ping and one window update per quarter window. Memory: a
	// peer can make the shuffler hold at most a stream's window of data
	// unread, beyond the message being read (at most reportLimit), so
	// 256 KiB + 320 KiB per stream at most, 16 streams per connection
	// (maxStreams), against the default's 16 MB + the message; and only a
	// peer whose client role was proved in the TLS handshake and whose
	// call carried a valid client credential in its headers gets a stream
	// whose data is kept at all (a refused stream's data is discarded).
	// Throughput: a stream sends at most a window per round trip, 5 MB/s
	// at 50 ms, more than a pool's reports (1.1 MB a round of 10,000).
	submitWindow = 256 << 10
	// submitConnWindow is the connection's window on the shuffler's
	// listener: gRPC returns it as data arrives, whether or not a stream
	// reads it, so it paces a connection's streams together and bounds no
	// memory (the streams' windows do).
	submitConnWindow = 1 << 20
)

// checkRole refuses a call whose peer's role may not make it.
func checkRole(ctx context.Context, method string) error {
	allowed, ok := rpcRoles[method]
	if !ok {
		return status.Errorf(codes.PermissionDenied, "%s: no role may call it", method)
	}
	role := peerRole(ctx)
	if !slices.Contains(allowed, role) {
		if role == "" {
			role = "none (no certificate)"
		}
		return status.Errorf(codes.PermissionDenied, "%s is for role %s; the peer's role is %s", method, strings.Join(allowed, " or "), role)
	}
	return nil
}

// peerRole is the role of a call's peer ("" without a certificate).
func peerRole(ctx context.Context) string {
	if p, ok := peer.FromContext(ctx); ok {
		if ti, ok := p.AuthInfo.(credentials.TLSInfo); ok {
			return pki.PeerRole(ti.State)
		}
	}
	return ""
}

// The call metadata carrying a client credential (the id, and the token
// as a binary header): the shuffler checks it when a call's headers
// arrive, so that only a holder of a valid client credential gets a
// message of a Work or Submit call read at all.
const (
	credClientKey = "shuffledp-client"
	credTokenKey  = "shuffledp-token-bin"
)

// withCredential adds client's credential to a call's metadata.
func withCredential(ctx context.Context, client int64, token []byte) context.Context {
	return metadata.AppendToOutgoingContext(ctx, credClientKey, strconv.FormatInt(client, 10), credTokenKey, string(token))
}

// headerCredential checks the credential in a call's metadata.
func headerCredential(md metadata.MD, e *pki.Enroller) error {
	ids, toks := md.Get(credClientKey), md.Get(credTokenKey)
	if len(ids) != 1 || len(toks) != 1 {
		return status.Errorf(codes.Unauthenticated, "the call carries no client credential in its metadata (%s, %s)", credClientKey, credTokenKey)
	}
	id, err := strconv.ParseInt(ids[0], 10, 64)
	if err != nil || !e.Verify(id, []byte(toks[0])) {
		return status.Errorf(codes.Unauthenticated, "client %s: invalid credential in the call's metadata", ids[0])
	}
	return nil
}

// serverLimits size a node's gRPC server from its run.
type serverLimits struct {
	// authorize, if set, is called with each call's method and metadata
	// when its headers arrive, after the role check and before any byte
	// of its message is read.
	authorize func(method string, md metadata.MD) error
	// recv is the largest message accepted.
	recv int
	// firstMessage bounds the wait for a stream's first message, idle
	// for every later one (0: no bound after the first).
	firstMessage, idle time.Duration
	// window and connWindow, if window is set, fix the HTTP/2
	// flow-control windows of each stream and of the connection
	// (submitWindow); unset, gRPC's dynamic windows.
	window, connWindow int32
}

// serverOptions are the options of every node's gRPC server: TLS (the
// peer's role checked in the handshake), bounded header lists, the
// per-call role check when a call's headers arrive (tap) and again before
// its handler, the message limit sized from the run, bounded streams per
// connection, a handshake deadline, keepalive enforcement, a deadline for
// every call's first message (a unary call's request included: the tap
// starts it, the handler's interceptor stops it) and idle deadlines on
// streams.
func serverOptions(tc *tls.Config, l serverLimits) []grpc.ServerOption {
	if l.firstMessage == 0 {
		l.firstMessage = DefaultFirstMessage
	}
	waiting := &waitingCalls{max: maxWaitingClientCalls}
	var window []grpc.ServerOption
	if l.window > 0 {
		window = []grpc.ServerOption{grpc.StaticStreamWindowSize(l.window), grpc.StaticConnWindowSize(l.connWindow)}
	}
	return append(window,
		grpc.Creds(credentials.NewTLS(tc)),
		grpc.MaxRecvMsgSize(l.recv),
		grpc.MaxSendMsgSize(sendLimit),
		grpc.MaxConcurrentStreams(maxStreams),
		grpc.MaxHeaderListSize(maxHeaderList),
		grpc.SharedWriteBuffer(true),
		grpc.ReadBufferSize(connReadBuffer),
		grpc.ConnectionTimeout(handshakeTimeout),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 10 * time.Second, PermitWithoutStream: true}),
		grpc.KeepaliveParams(keepalive.ServerParameters{MaxConnectionIdle: 5 * time.Minute, Time: time.Minute, Timeout: 20 * time.Second}),
		grpc.InTapHandle(func(ctx context.Context, info *tap.Info) (context.Context, error) {
			if err := checkRole(ctx, info.FullMethodName); err != nil {
				return ctx, err
			}
			if l.authorize != nil {
				if err := l.authorize(info.FullMethodName, info.Header); err != nil {
					return ctx, err
				}
			}
			wait := l.firstMessage
			if bulkUnary[info.FullMethodName] {
				wait += time.Duration(l.recv/minRecvRate+1) * time.Second
			}
			var count *waitingCalls
			if peerRole(ctx) == pki.RoleClient {
				count = waiting
			}
			return withFirstMessageDeadline(ctx, wait, count)
		}),
		grpc.UnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			if !firstMessageArrived(ctx) {
				return nil, status.Error(codes.DeadlineExceeded, "the request did not arrive in time; call closed")
			}
			if err := checkRole(ctx, info.FullMethod); err != nil {
				return nil, err
			}
			return h(ctx, req)
		}),
		grpc.StreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			// A stream's messages have their own deadlines
			// (deadlineStream), from now on.
			if !firstMessageArrived(ss.Context()) {
				return status.Error(codes.DeadlineExceeded, "the stream was closed before its handler started")
			}
			if err := checkRole(ss.Context(), info.FullMethod); err != nil {
				return err
			}
			return h(srv, &deadlineStream{ServerStream: ss, first: l.firstMessage, idle: l.idle})
		}),
	)
}

// bulkUnary are the unary calls whose request may be large (up to the
// server's message limit, a batch): their first-message deadline grows by
// a second per MiB of the limit (minRecvRate).
var bulkUnary = map[string]bool{pb.Server_SubmitBatch_FullMethodName: true}

// firstMessageKey is the context key of a call's *firstMessage.
type firstMessageKey struct{}

// waitingCalls counts calls waiting for their first message, up to max.
type waitingCalls struct {
	n   atomic.Int64
	max int64
}

// firstMessage is a call's wait for its first message: the timer that
// cancels the call, and release, which gives its place in waitingCalls
// back (once: when the message arrived, the timer fired, or the call
// ended).
type firstMessage struct {
	timer   *time.Timer
	release func()
}

// withFirstMessageDeadline returns the call's context (the tap's: gRPC
// makes it the stream's), cancelled after wait unless firstMessageArrived
// stops the timer first. gRPC reads a unary call's request before any
// interceptor or handler runs, under this context: a peer that sends
// headers and no request (a GetRun with no body) has its stream closed
// after wait, like a stream that sends no first message. Cancelled, the
// stream ends (codes.Canceled) and nothing of it is kept. With count, the
// call takes a place there until then, and is refused (ResourceExhausted)
// when none is left.
func withFirstMessageDeadline(ctx context.Context, wait time.Duration, count *waitingCalls) (context.Context, error) {
	release := func() {}
	if count != nil {
		if count.n.Add(1) > count.max {
			count.n.Add(-1)
			return ctx, status.Errorf(codes.ResourceExhausted, "%d calls wait for their request already; call refused", count.max)
		}
		var once sync.Once
		release = func() { once.Do(func() { count.n.Add(-1) }) }
	}
	ctx, cancel := context.WithCancel(ctx)
	fm := &firstMessage{release: release}
	fm.timer = time.AfterFunc(wait, func() { cancel(); release() })
	context.AfterFunc(ctx, release) // the call ended before
	return context.WithValue(ctx, firstMessageKey{}, fm), nil
}

// firstMessageArrived stops the call's first-message timer and gives its
// place back; false if the timer already fired (the call's context is
// cancelled).
func firstMessageArrived(ctx context.Context) bool {
	if fm, ok := ctx.Value(firstMessageKey{}).(*firstMessage); ok {
		stopped := fm.timer.Stop()
		fm.release()
		return stopped
	}
	return true
}

// deadlineStream bounds the wait for each message of a stream: the first
// within first, each later one within idle (0: unbounded). A stream that
// misses its deadline ends with DeadlineExceeded, which closes it (and so
// unblocks the pending read).
type deadlineStream struct {
	grpc.ServerStream
	first, idle time.Duration
	n           int
}

func (s *deadlineStream) RecvMsg(m any) error {
	d := s.idle
	if s.n == 0 {
		d = s.first
	}
	s.n++
	if d <= 0 {
		return s.ServerStream.RecvMsg(m)
	}
	done := make(chan error, 1)
	go func() { done <- s.ServerStream.RecvMsg(m) }()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		what := "a message"
		if s.n == 1 {
			what = "the first message"
		}
		return status.Errorf(codes.DeadlineExceeded, "no %s within %v; stream closed", what, d)
	}
}

// credentialWait is how long a shuffler waits, beyond
// DefaultFirstMessage, for each enrolled client's credential in a
// stream's first message. It was sized for pools that sent their whole
// range as one Work message (about 45 bytes per client: ~11 MB at 250,000
// clients, which took more than 10 s to arrive on a loaded host); a Work
// message now holds at most what reportLimit admits (a pool sends
// registerChunk clients, ~185 KB), so an honest stream's first message
// needs far less. The wait is kept (only a peer that proved the client
// role and a credential in the call's headers gets it). 40 µs per client
// is ~1 MB/s: 40 s more at a million clients.
const credentialWait = 40 * time.Microsecond

// firstMessageWait is the bound on the wait for a stream's first message
// at a shuffler of run: configured if set, else DefaultFirstMessage plus
// credentialWait per client of the population. Only a peer that proved
// the client role in the TLS handshake and a valid client credential in
// the call's headers (the tap, before any message byte is read) waits
// that long.
func firstMessageWait(run protocol.RunConfig, configured time.Duration) time.Duration {
	if configured > 0 {
		return configured
	}
	return DefaultFirstMessage + time.Duration(max(run.Population, 0))*credentialWait
}

// reportLimit is the largest message a shuffler accepts from a client for
// run: a Submit chunk of chunkReports reports (report, token, id, field
// overhead), or a Work message of registerChunk clients (at most 64 bytes
// each: id, token, field overhead); at most recvCeiling (as every limit
// below). It does not grow with the population: whatever a client sends,
// the shuffler decodes at most this much per message, so a registration
// costs it its per-client state and one message, never the caller's range
// as messages (TestRegistrationPeakPerClient).
func reportLimit(run protocol.RunConfig) int {
	return min(max(chunkReports*(run.ReportBytes+64), registerChunk*64)+msgMargin, recvCeiling)
}

// batchLimit is the largest message the server accepts: a batch of the
// run's largest size.
func batchLimit(run protocol.RunConfig) int {
	most := run.PerRound
	if run.Participation == protocol.ParticipationCheckIn {
		most = run.Population
	}
	return min(most*run.ReportBytes+msgMargin, recvCeiling)
}

// modelLimit is the largest model message (a GetModel reply, or an
// Assignment relaying the model and naming up to the population's clients).
func modelLimit(run protocol.RunConfig) int {
	return min(run.Dim*9+run.Population*10+msgMargin, recvCeiling)
}

// limitListener closes connections accepted beyond max open ones at once.
type limitListener struct {
	net.Listener
	sem     chan struct{}
	refused atomic.Int64
}

func newLimitListener(l net.Listener, maxConns int) *limitListener {
	if maxConns <= 0 {
		maxConns = DefaultMaxConns
	}
	return &limitListener{Listener: l, sem: make(chan struct{}, maxConns)}
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		select {
		case l.sem <- struct{}{}:
			return &limitConn{Conn: c, release: func() { <-l.sem }}, nil
		default:
			l.refused.Add(1)
			c.Close()
		}
	}
}

type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// checkListenerTLS refuses a listener configuration that does not check
// its peers' roles in the handshake.
func checkListenerTLS(role string, tc *tls.Config) error {
	if !pki.VerifiesRoles(tc) {
		return fmt.Errorf("%s: the listener's TLS configuration must check its peers' roles (pki.ServerTLS)", role)
	}
	return nil
}
