package node

import (
	"errors"
	"fmt"
	"io"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	pb "github.com/shuffledp/shuffledp/proto/shuffledp/v1"
	"github.com/shuffledp/shuffledp/protocol"
	"github.com/shuffledp/shuffledp/shuffler"
)

// Submit implements the Shuffler service: every report is authenticated
// (its client's credential) and checked (open round, envelope, key id,
// length, replay) before the Service takes it (sampled, not yet reported).
func (s *Shuffler) Submit(stream grpc.ClientStreamingServer[pb.ReportChunk, pb.SubmitAck]) error {
	<-s.ready
	ack := &pb.SubmitAck{Rejected: map[string]int64{}}
	rejected := map[Reason]int64{}
	var round int64
	first := true
	// The stream's chunks are received one after another into one
	// chunkReceiver (its buffers reused): nothing of a chunk is kept
	// beyond its loop iteration but the copies openRound.keep makes.
	recv := new(chunkReceiver)
	for {
		if err := stream.RecvMsg(recv); err == io.EOF {
			break
		} else if err != nil {
			return err
		}
		chunk := &recv.ReportChunk
		round = chunk.Round
		if first && !s.authenticates(chunk) {
			s.stats.add(func(st *Stats) { st.Rejected[RejectUnauthenticated]++ })
			s.cfg.Metrics.ReportsRejected(RejectUnauthenticated.Label(), 1)
			s.cfg.Dashboard.Error("call refused: unauthenticated")
			return status.Error(codes.Unauthenticated, "the stream's first message carries no valid client credential")
		}
		first = false
		for _, d := range chunk.Declined {
			if reason, ok := s.decline(chunk, d); !ok {
				rejected[reason]++
			}
		}
		for _, rep := range chunk.Reports {
			if reason, ok := s.accept(chunk, rep); !ok {
				rejected[reason]++
			} else {
				ack.Accepted++
			}
		}
	}
	if len(rejected) > 0 {
		s.stats.add(func(st *Stats) {
			for r, n := range rejected {
				st.Rejected[r] += n
			}
		})
		for r, n := range rejected {
			s.cfg.Metrics.ReportsRejected(r.Label(), n)
		}
		s.cfg.Dashboard.Error(fmt.Sprintf("round %d: rejected reports (%s)", round, formatRejects(rejected)))
		s.logf("round %d: rejected reports (%s)", round, formatRejects(rejected))
		for r, n := range rejected {
			ack.Rejected[string(r)] = n
		}
	}
	return stream.SendAndClose(ack)
}

// authorizeCall refuses a Work or Submit call whose metadata carries no
// valid client credential, before any byte of its message is read (so a
// peer holding the client certificate but no credential gets nothing
// allocated for its messages).
func (s *Shuffler) authorizeCall(method string, md metadata.MD) error {
	if method != pb.Shuffler_Work_FullMethodName && method != pb.Shuffler_Submit_FullMethodName {
		return nil
	}
	if err := headerCredential(md, s.cfg.Enroller); err != nil {
		s.stats.add(func(st *Stats) { st.Rejected[RejectUnauthenticated]++ })
		s.cfg.Metrics.ReportsRejected(RejectUnauthenticated.Label(), 1)
		s.cfg.Dashboard.Error("call refused: unauthenticated")
		return err
	}
	return nil
}

// authenticates reports whether a Submit stream's first chunk carries at
// least one valid client credential (a stream that does not is closed
// before it can send more).
func (s *Shuffler) authenticates(chunk *pb.ReportChunk) bool {
	if chunk.Run != s.run.Run {
		return false
	}
	for _, r := range chunk.Reports {
		if s.cfg.Enroller.Verify(r.Client, r.Token) {
			return true
		}
	}
	for _, d := range chunk.Declined {
		if s.cfg.Enroller.Verify(d.Client, d.Token) {
			return true
		}
	}
	return false
}

// accept checks and submits one report.
func (s *Shuffler) accept(chunk *pb.ReportChunk, rep *pb.Report) (Reason, bool) {
	if chunk.Run != s.run.Run || !s.cfg.Enroller.Verify(rep.Client, rep.Token) {
		return RejectUnauthenticated, false
	}
	h, err := protocol.ParseHeader(rep.Sealed)
	if err != nil {
		return RejectMalformed, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.round
	switch {
	case r == nil || chunk.Round != r.id:
		return RejectWrongRound, false
	case len(rep.Sealed) != s.run.ReportBytes:
		return RejectWrongLength, false
	}
	if _, ok := s.keys[h.KeyID]; !ok {
		return RejectUnknownKey, false
	}
	if h.KeyID != r.keyID {
		return RejectWrongKey, false
	}
	_, inRound := r.ids[h.ReportID]
	_, inPrev := s.prevIDs[h.ReportID]
	if inRound || inPrev {
		return RejectReplay, false
	}
	if rep.Client < s.lo || rep.Client >= s.lo+int64(s.local.Population) {
		return RejectNotSampled, false
	}
	kept := r.keep(rep.Sealed)
	if err := s.svc.Submit(int(rep.Client-s.lo), chunk.Round, kept); err != nil {
		r.unkeep(kept)
		switch {
		case errors.Is(err, shuffler.ErrNotSampled):
			return RejectNotSampled, false
		case errors.Is(err, shuffler.ErrDuplicate):
			return RejectDuplicate, false
		case errors.Is(err, shuffler.ErrReportLength):
			return RejectWrongLength, false
		default:
			return RejectWrongRound, false
		}
	}
	r.ids[h.ReportID] = struct{}{}
	r.accepted++
	if s.dummies != nil {
		s.dummies.delivered(r.id, s.svc.Slot(int(rep.Client-s.lo)))
	}
	s.stats.add(func(st *Stats) { st.Accepted++ })
	s.cfg.Metrics.ReportAccepted()
	if r.accepted == r.expected {
		close(r.complete)
	}
	return "", true
}

// decline refuses a check-in decline (a client saying it does not take
// part), which the former client-side check-in sent: the shuffler selects
// the check-in clients itself, and a selected client that does not
// deliver is a dropout, padded at the deadline; an answer that would end
// the round early is not taken.
func (s *Shuffler) decline(chunk *pb.ReportChunk, d *pb.ClientCredential) (Reason, bool) {
	if chunk.Run != s.run.Run || !s.cfg.Enroller.Verify(d.Client, d.Token) {
		return RejectUnauthenticated, false
	}
	return RejectNotSampled, false
}
