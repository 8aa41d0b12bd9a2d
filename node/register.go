package node

import (
	"context"
	"errors"
	"fmt"
	"io"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/shuffledp/shuffledp/proto/shuffledp/v1"
)

// registerChunk is the number of clients a client pool names in one Work
// message: its range goes in messages of at most this many credentials
// (about 45 bytes each on the wire, ~185 KB a message), each built when
// it is sent, so that neither the pool nor the shuffler ever holds the
// whole range as messages (the shuffler keeps ~8 bytes of each client it
// reads; TestRegistrationPeakPerClient bounds its peak).
const registerChunk = 4096

// workStream is a client pool's side of a Work stream.
type workStream = grpc.BidiStreamingClient[pb.WorkRequest, pb.Assignment]

// sendRegistration opens a Work stream on shuf and sends the credentials
// of clients lo..hi-1 (token(c) is client c's) in messages of at most
// chunk clients (a client pool sends registerChunk), each built into the
// same buffers as it is sent, then closes the stream's sending side. A
// refusal by the shuffler is not an error here: the stream's headers and
// Recv carry it.
func sendRegistration(ctx context.Context, shuf pb.ShufflerClient, run string, lo, hi, chunk int64, token func(int64) []byte, opts ...grpc.CallOption) (workStream, error) {
	if chunk < 1 || hi <= lo {
		return nil, fmt.Errorf("registration of clients %d:%d in messages of %d: nothing to register", lo, hi, chunk)
	}
	work, err := shuf.Work(ctx, opts...)
	if err != nil {
		return nil, err
	}
	n := min(hi-lo, chunk)
	creds := make([]pb.ClientCredential, n)
	req := &pb.WorkRequest{Run: run, Clients: make([]*pb.ClientCredential, n)}
	for c := lo; c < hi; c += n {
		m := min(n, hi-c)
		req.Clients = req.Clients[:m]
		for i := range m {
			creds[i].Client, creds[i].Token = c+i, token(c+i)
			req.Clients[i] = &creds[i]
		}
		// SendMsg encodes the message before it returns, so the buffers
		// are free for the next one.
		if err := work.Send(req); err != nil {
			if errors.Is(err, io.EOF) {
				break // the shuffler ended the stream: Recv says why
			}
			return nil, err
		}
	}
	if err := work.CloseSend(); err != nil {
		return nil, err
	}
	return work, nil
}

// idRuns is a set of client indices kept as maximal runs of consecutive
// ones in arrival order ({lo, hi} each): a client pool registers a range,
// so its Work stream holds one run, not 8 bytes per client.
type idRuns [][2]int64

// add appends client c (extending the last run when c follows it).
func (r *idRuns) add(c int64) {
	if n := len(*r); n > 0 && (*r)[n-1][1] == c {
		(*r)[n-1][1]++
		return
	}
	*r = append(*r, [2]int64{c, c + 1})
}

// each calls f with every index of r, in arrival order.
func (r idRuns) each(f func(int64)) {
	for _, run := range r {
		for c := run[0]; c < run[1]; c++ {
			f(c)
		}
	}
}

// receiveRegistration reads a Work stream's messages until the caller
// closes its side and returns the clients they name, with their number
// (repeats counted). Every message is checked as it arrives (the run,
// the shard, each credential) and dropped once its indices are kept, so
// the shuffler's memory while a pool registers grows by its per-client
// state and one message, not by the pool's range as messages. Any
// invalid message refuses the whole registration: nothing is registered.
func (s *Shuffler) receiveRegistration(stream grpc.BidiStreamingServer[pb.WorkRequest, pb.Assignment]) (idRuns, int, error) {
	var (
		ids   idRuns
		total int
	)
	for first := true; ; first = false {
		req, err := stream.Recv()
		if errors.Is(err, io.EOF) && !first {
			return ids, total, nil
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, 0, err
		}
		if req == nil || len(req.Clients) == 0 { // nothing to authenticate: nothing to hold open
			s.stats.add(func(st *Stats) { st.Rejected[RejectUnauthenticated]++ })
			s.cfg.Metrics.ReportsRejected(RejectUnauthenticated.Label(), 1)
			s.cfg.Dashboard.Error("call refused: unauthenticated")
			return nil, 0, status.Error(codes.Unauthenticated, "Work message without any client credential")
		}
		if first {
			<-s.ready
		}
		if req.Run != s.run.Run {
			return nil, 0, status.Errorf(codes.NotFound, "run %q, the shuffler's is %q", req.Run, s.run.Run)
		}
		if total += len(req.Clients); total > s.local.Population {
			return nil, 0, status.Errorf(codes.InvalidArgument, "%d clients registered, the run has %d", total, s.local.Population)
		}
		for _, c := range req.Clients {
			if s.local.Run != s.run.Run && (c.Client < s.lo || c.Client >= s.lo+int64(s.local.Population)) {
				return nil, 0, status.Errorf(codes.InvalidArgument, "client %d is not in this shuffler's shard (%s: clients %d..%d)", c.Client, s.local.Run, s.lo, s.lo+int64(s.local.Population)-1)
			}
			if c.Client >= int64(s.run.Population) || !s.cfg.Enroller.Verify(c.Client, c.Token) {
				s.stats.add(func(st *Stats) { st.Rejected[RejectUnauthenticated]++ })
				s.cfg.Metrics.ReportsRejected(RejectUnauthenticated.Label(), 1)
				s.cfg.Dashboard.Error("call refused: unauthenticated")
				return nil, 0, status.Errorf(codes.Unauthenticated, "client %d: invalid credential", c.Client)
			}
			ids.add(c.Client)
		}
	}
}
