package node

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/status"

	"github.com/shuffledp/shuffledp/pki"
	pb "github.com/shuffledp/shuffledp/proto/shuffledp/v1"
	"github.com/shuffledp/shuffledp/protocol"
	"github.com/shuffledp/shuffledp/shard"
	"github.com/shuffledp/shuffledp/shuffler"
)

// forward sends a released batch to the server: run, round and the reports
// concatenated (all of the run's length), nothing else.
func (s *Shuffler) forward(ctx context.Context, srv pb.ServerClient, b protocol.Batch) error {
	size := s.run.ReportBytes
	// The concatenation is reused from round to round (the rounds'
	// releases are sequential, and gRPC has encoded the message by the
	// time SubmitBatch returns): 750 KB a round less garbage at k = 10,000.
	buf := s.forwardBuf[:0]
	for _, r := range b.Reports {
		buf = append(buf, r...)
	}
	s.forwardBuf = buf
	// The batch is debited: it is forwarded even if the shuffler is asked
	// to stop meanwhile (ctx carries no cancellation), but the wait is
	// bounded: the server must answer within ConnectTimeout, and a stop
	// request ends the call after closeGrace (a debited batch that never
	// arrives is charged, never released twice).
	if s.serverConn == nil || s.serverConn.GetState() != connectivity.Ready {
		if err := waitReachable(s.stopCtx, pki.RoleServer, s.cfg.Server, s.cfg.ServerTLS, s.cfg.ConnectTimeout); err != nil {
			return fmt.Errorf("the server went away before the run finished: %w", err)
		}
	}
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(s.stopCtx, func() {
		select {
		case <-time.After(closeGrace):
			cancel()
		case <-fctx.Done():
		}
	})
	defer stop()
	_, err := srv.SubmitBatch(fctx, &pb.Batch{Run: b.Run, Round: b.Round, ReportBytes: int64(size), Reports: buf, ModelVersion: b.ModelVersion}, grpc.WaitForReady(true))
	switch status.Code(err) {
	case codes.Unavailable:
		return fmt.Errorf("the server at %s went away before the run finished: %w", s.cfg.Server, err)
	case codes.AlreadyExists:
		return fmt.Errorf("%w (%v)", errAlreadyDelivered, err)
	case codes.Aborted:
		return fmt.Errorf("%w (%v)", errStaleModel, err)
	}
	return err
}

// errStaleModel: the server refused the batch as computed on a model
// version it does not wait for (it restarted from an older checkpoint
// meanwhile). The round is debited and not applied: counted, never
// released again; the next round runs on the server's current model.
var errStaleModel = errors.New("the server refused the batch: computed on a model version it does not wait for")

// claimBudget claims the round's report ids in the durable report-id store
// in the ledger's debit, one transaction (ledger.Ledger.DebitClaiming): a
// round holding an id already claimed under another round (a replay the
// in-memory check could not see, e.g. across a restart) is refused, so it
// is discarded and nothing is debited or claimed.
type claimBudget struct {
	inner *shuffler.LedgerBudget
	// lease, in a sharded run, is the shard's: checked before every debit
	// (an early stop; the ledger's fence decides).
	lease *shard.Lease
	// dummies, if not nil, are the round's dummy reports handed to the
	// Service at release: their ids are claimed with the clients'.
	dummies *roundDummies
	// planned, if > 0, is the run's planned rounds: no debit past them.
	planned int64

	mu      sync.Mutex
	pending [][protocol.ReportIDSize]byte
	found   [][protocol.ReportIDSize]byte
}

// errReplayed refuses a release holding replayed report ids.
var errReplayed = errors.New("batch holds report ids claimed in an earlier round (replays)")

func (c *claimBudget) set(ids [][protocol.ReportIDSize]byte) {
	c.mu.Lock()
	c.pending, c.found = ids, nil
	c.mu.Unlock()
}

func (c *claimBudget) replays() [][protocol.ReportIDSize]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.found
}

// Debit implements shuffler.Budget.
func (c *claimBudget) Debit(ctx context.Context, r shuffler.Release) error {
	c.mu.Lock()
	ids := c.pending
	c.mu.Unlock()
	if c.dummies != nil {
		ids = append(slices.Clip(ids), c.dummies.issuedIDs()...)
	}
	if len(ids) != r.Reports {
		return fmt.Errorf("report ids: %d claimed for a batch of %d", len(ids), r.Reports)
	}
	if r.Run != c.inner.Ledger.Run() {
		return fmt.Errorf("release of run %q, ledger of run %q", r.Run, c.inner.Ledger.Run())
	}
	if n := c.inner.Ledger.Rounds(); c.planned > 0 && n >= c.planned {
		return fmt.Errorf("%w: %d of %d debited", protocol.ErrRoundsDebited, n, c.planned)
	}
	if c.lease != nil {
		if err := c.lease.Check(ctx); err != nil {
			return err
		}
	}
	replays, err := c.inner.Ledger.DebitClaiming(ctx, r.Round, c.inner.Event(r.Reports), r.Reports, r.Digest, ids)
	if len(replays) > 0 {
		c.mu.Lock()
		c.found = replays
		c.mu.Unlock()
		return fmt.Errorf("%w: %d", errReplayed, len(replays))
	}
	return err
}

// Check implements shuffler.Checker.
func (c *claimBudget) Check(ctx context.Context, r shuffler.Release) error {
	return c.inner.Check(ctx, r)
}

// LastRound implements shuffler.LastRounder.
func (c *claimBudget) LastRound(ctx context.Context, run string) (int64, error) {
	return c.inner.LastRound(ctx, run)
}
