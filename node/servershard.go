package node

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/ledger"
	pb "github.com/shuffledp/shuffledp/proto/shuffledp/v1"
	"github.com/shuffledp/shuffledp/protocol"
	"github.com/shuffledp/shuffledp/shard"
)

// The server's side of a sharded run (ServerConfig.Shards > 1,
// docs/shards.md). Every shard's shuffler calls GetModel, SubmitBatch and
// Stop under its shard's run id (shard.RunID); the server hands a shard
// the model of a round only while the shard owes that round a batch
// (shard.Collector.Next), takes one batch per (shard, round), and gives
// the loop the round's batches together as one batch: the reports of every
// shard, each opened under its own shard's binding (the shard's run id and
// round: the clients seal to the run id of the model their shard's
// shuffler relays, the shard's),
// summed and divided by their number by the loop, as one round. The server
// learns the tuple of the shards' batches and nothing else.

// shardRun sets up the sharded run of run: its plan (equal shards) and
// the collector of the shards' batches.
func (s *Server) shardRun(run protocol.RunConfig) error {
	S := s.cfg.Shards
	switch {
	case run.Participation == protocol.ParticipationCheckIn:
		return errors.New("shards: a sharded run samples k of n (participation sample), not check-in")
	case run.Population%S != 0 || run.PerRound%S != 0:
		return fmt.Errorf("shards: %d shards must divide the clients (%d) and the sample (%d), so that every shard is the same subsampled shuffle", S, run.Population, run.PerRound)
	}
	p, err := shard.Split(run.Run, int64(run.Population), int64(run.PerRound), S, int64(run.MinBatch))
	if err != nil {
		return fmt.Errorf("shards: %w", err)
	}
	s.plan = &p
	s.coll = shard.NewCollector(p, 0)
	s.served = make([]int64, S)
	return nil
}

// shardOf returns the shard whose run id is run, or a NotFound status.
func (s *Server) shardOf(run string) (int, error) {
	r, i, n, err := shard.ParseRunID(run)
	if err != nil || r != s.run.Run || n != len(s.plan.Parts) {
		return 0, status.Errorf(codes.NotFound, "run %q is not a shard of the server's run %q in %d shards", run, s.run.Run, len(s.plan.Parts))
	}
	return i, nil
}

// getShardModel is GetModel for a shard's shuffler: it waits until the
// shard owes the round being collected a batch and the model of that
// round is published, and returns it (under the run's id; the shard's
// shuffler relays it to its clients under the shard's run id, to which
// they seal their reports with the shard's round).
func (s *Server) getShardModel(ctx context.Context, req *pb.GetModelRequest) (*pb.Model, error) {
	i, err := s.shardOf(req.Run)
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-s.stopping:
			cancel()
		case <-cctx.Done():
		}
	}()
	r, done, err := s.coll.Next(cctx, i)
	if err != nil {
		if ctx.Err() == nil {
			return nil, status.Error(codes.Unavailable, "server stopping")
		}
		return nil, status.FromContextError(ctx.Err()).Err()
	}
	if done {
		return &pb.Model{Run: req.Run, Finished: true}, nil
	}
	for {
		s.mu.Lock()
		m, fin, ch := s.model, s.finished, s.changed
		published := m != nil && s.coll.Current() == r && s.modelRound == r
		if published {
			s.served[i] = r
		}
		s.mu.Unlock()
		if fin {
			return &pb.Model{Run: req.Run, Finished: true}, nil
		}
		if published {
			return m, nil
		}
		select {
		case <-ch:
		case <-cctx.Done():
			if ctx.Err() == nil {
				return nil, status.Error(codes.Unavailable, "server stopping")
			}
			return nil, status.FromContextError(ctx.Err()).Err()
		}
	}
}

// submitShardBatch is SubmitBatch for a shard's shuffler: the batch is
// checked against the shard's part of the run (its run id, k_s, minimum
// batch) and offered for the round the shard was handed the model of, if
// it was computed on that model's version (else Aborted, as a batch
// before any model was handed to the shard in this server's life). A
// second batch of that (shard, round) is refused with AlreadyExists: the
// shuffler debited it and must not release it.
func (s *Server) submitShardBatch(p *pb.Batch) (*pb.BatchAck, error) {
	i, err := s.shardOf(p.Run)
	if err != nil {
		return nil, err
	}
	b, err := CheckBatch(shard.PartConfig(s.run, s.plan.Parts[i]), map[uint8]bool{s.key.Config.ID: true}, p)
	if err != nil {
		s.cfg.Metrics.BatchRejected(batchReason(err))
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	s.mu.Lock()
	r, m := s.served[i], s.model
	s.mu.Unlock()
	if r == 0 || m == nil || m.Version != b.ModelVersion {
		// Computed on a model of the server before it restarted (from an
		// older checkpoint; none handed to the shard since): the shuffler
		// counts it debited and unused.
		return nil, status.Errorf(codes.Aborted, "shard %d: batch of round %d computed on model version %d, which the server did not hand the shard for the round it collects", i, b.Round, b.ModelVersion)
	}
	switch err := s.coll.Offer(i, r, b); {
	case errors.Is(err, shard.ErrAlreadyDelivered):
		return nil, status.Error(codes.AlreadyExists, err.Error())
	case err != nil:
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	return &pb.BatchAck{}, nil
}

// nextSharded is Next in a sharded run: publish the model for the round
// being collected, wait for every shard's batch, and return them as one
// batch (the reports of every shard in shard order; its round the largest
// of the shards' round ids, which grows every round — each shard's does —
// so that the server's ledger never sees a round id twice).
func (s *Server) nextSharded(ctx context.Context, pm *pb.Model) (protocol.Batch, error) {
	s.mu.Lock()
	s.model = pm
	s.modelRound = s.coll.Current()
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
	cctx, cancel := context.WithTimeout(ctx, s.cfg.BatchTimeout)
	defer cancel()
	stopped := make(chan string, 1)
	go func() {
		select {
		case reason := <-s.stops:
			stopped <- reason
			cancel()
		case <-s.stopping:
			cancel()
		case <-cctx.Done():
		}
	}()
	_, bs, err := s.coll.Take(cctx)
	if err != nil {
		select {
		case reason := <-stopped:
			return protocol.Batch{}, fmt.Errorf("a shard's shuffler stopped the run (%s): %w", reason, ledger.ErrBudgetExhausted)
		default:
		}
		if ctx.Err() != nil {
			return protocol.Batch{}, ctx.Err()
		}
		if errors.Is(cctx.Err(), context.DeadlineExceeded) {
			return protocol.Batch{}, fmt.Errorf("%w: not every shard's batch within %v of publishing model version %d (--batch-timeout); is every shard's shuffler running, connected to this server, with its clients registered?",
				ErrBatchTimeout, s.cfg.BatchTimeout, pm.Version)
		}
		return protocol.Batch{}, ErrStopped
	}
	out, bind := s.joinShards(bs)
	s.bindings.Store(&bind)
	s.mu.Lock()
	s.taken = time.Now()
	s.mu.Unlock()
	return out, nil
}

// joinShards returns the shards' batches of a round as one batch (every
// shard's reports in shard order; its round the largest of the shards'
// round ids) and the binding each report opens under: its own shard
// batch's, (the shard's run id, the shard's round id). A shard's batch is
// checked to carry its shard's run id (CheckBatch against
// shard.PartConfig) before the collector takes it, so a report released
// by another shard's batch than the one it was sealed for does not open.
// A report ID in the batches of two shards (a copy released through
// another shard: each shuffler refuses repeated IDs only among its own
// shard's reports) gets refusedBinding, under which no copy opens: the
// bindings are looked up by report ID, so no copy could be told from the
// original.
func (s *Server) joinShards(bs []protocol.Batch) (protocol.Batch, map[[protocol.ReportIDSize]byte]protocol.Binding) {
	out := protocol.Batch{Run: s.run.Run}
	bind := make(map[[protocol.ReportIDSize]byte]protocol.Binding)
	for _, b := range bs {
		out.Round = max(out.Round, b.Round)
		for _, rep := range b.Reports {
			if h, err := protocol.ParseHeader(rep); err == nil {
				if old, ok := bind[h.ReportID]; ok && old != b.Binding() {
					bind[h.ReportID] = refusedBinding
				} else {
					bind[h.ReportID] = b.Binding()
				}
			}
			out.Reports = append(out.Reports, rep)
		}
	}
	return out, bind
}

// refusedBinding marks a report ID found in two shards' batches of a
// round: shardOpener opens no report of that ID (a round id is never
// negative, so no shard batch has this binding).
var refusedBinding = protocol.Binding{Round: -1}

// BatchEvent is the privacy event the server's ledger records for a batch
// Next returned (training.BatchEventer): in a sharded run, one shard's
// round (every shard is the same subsampled shuffle of n/S clients, k/S
// reports, and a client's guarantee is its own shard's); otherwise the
// run's round of the batch's size.
func (s *Server) BatchEvent(b protocol.Batch) event.Event {
	if s.plan == nil {
		return s.run.Round(len(b.Reports)).Event()
	}
	part := s.plan.Parts[0]
	return shard.PartConfig(s.run, part).Round(int(part.K)).Event()
}

// shardOpener opens each report of a sharded round under its own shard's
// binding (joinShards: the clients sealed it to their shard's run id and
// round).
type shardOpener struct {
	op protocol.Opener
	s  *Server
}

// Open implements protocol.Opener.
func (o shardOpener) Open(b protocol.Binding, sealed []byte) ([]byte, error) {
	if h, err := protocol.ParseHeader(sealed); err == nil {
		if m := o.s.bindings.Load(); m != nil {
			if bb, ok := (*m)[h.ReportID]; ok {
				if bb == refusedBinding {
					return nil, fmt.Errorf("open: %w: report id in the batches of two shards", protocol.ErrOpen)
				}
				b = bb
			}
		}
	}
	return o.op.Open(b, sealed)
}
