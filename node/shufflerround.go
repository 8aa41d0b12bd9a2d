package node

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/status"

	"github.com/shuffledp/shuffledp/ledger"
	"github.com/shuffledp/shuffledp/pki"
	pb "github.com/shuffledp/shuffledp/proto/shuffledp/v1"
	"github.com/shuffledp/shuffledp/protocol"
	"github.com/shuffledp/shuffledp/shard"
	"github.com/shuffledp/shuffledp/telemetry"
)

// processCPU returns the process's user and system CPU time (getrusage).
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// openRound is the round being collected.
type openRound struct {
	id       int64
	keyID    uint8
	ids      map[[protocol.ReportIDSize]byte]struct{}
	accepted int
	// expected is the number of clients the round was drawn for (k, or
	// under check-in the number selected); complete is closed when that
	// many reports were accepted.
	expected int
	complete chan struct{}
	// size is the run's report length; block the memory accepted reports
	// are copied into (keep).
	size  int
	block []byte
}

// keepReports is how many reports' bytes keep allocates at a time.
const keepReports = 256

// keep returns a copy of an accepted report's bytes in the round's own
// memory, allocated keepReports reports at a time (at most the reports
// still expected): the shuffler holds what it accepted and nothing of the
// message it came in (which submitCodec decodes into one buffer per
// chunk, so that a report aliasing it would keep the whole chunk alive).
func (r *openRound) keep(sealed []byte) []byte {
	if len(sealed) != r.size {
		return slices.Clone(sealed)
	}
	if cap(r.block)-len(r.block) < r.size {
		r.block = make([]byte, 0, r.size*max(1, min(keepReports, r.expected-r.accepted)))
	}
	n := len(r.block)
	r.block = append(r.block, sealed...)
	return r.block[n : n+r.size : n+r.size]
}

// unkeep gives back the memory of the report keep returned last, which
// the Service refused (a duplicate, say): refused reports take no memory.
func (r *openRound) unkeep(kept []byte) {
	if n := len(r.block) - len(kept); len(kept) == r.size && n >= 0 && &r.block[n] == &kept[0] {
		r.block = r.block[:n]
	}
}

// rounds is the shuffler's loop: get the model, open a round, relay it,
// collect, release (claim report ids, debit, permute, forward).
func (s *Shuffler) rounds(ctx context.Context, srv pb.ServerClient, l *ledger.Ledger) error {
	after := int64(-1)
	for {
		epoch := s.connects.Load()
		m, err := s.getModel(ctx, srv, after)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		if m.Finished {
			s.logf("the server finished the run")
			s.over()
			return nil
		}
		if len(m.Params) != s.run.Dim || m.Run != s.run.Run {
			return fmt.Errorf("shuffler: model of run %q with %d parameters, want run %q with %d", m.Run, len(m.Params), s.run.Run, s.run.Dim)
		}
		if _, ok := s.keys[uint8(m.KeyId)]; !ok || m.KeyId > 255 {
			return fmt.Errorf("shuffler: the server asks for key id %d, which it does not publish", m.KeyId)
		}
		if err := s.checkBehind(m, l); err != nil {
			return err
		}
		for released := false; !released; {
			if n := l.Rounds(); s.planned > 0 && n >= s.planned {
				// Every planned round is debited, and the server still
				// asks for one (it applied fewer: batches lost to a
				// crash, or refused as computed on a stale model).
				s.logf("the ledger holds %d debited rounds, the run's %d planned; stopping the run", n, s.planned)
				_, serr := srv.Stop(ctx, &pb.StopRequest{Run: s.local.Run, Reason: protocol.StopRounds})
				if serr == nil {
					s.over()
				}
				return serr
			}
			if err := s.waitClients(ctx); err != nil {
				if ctx.Err() != nil {
					return nil // cancelled
				}
				return err
			}
			round, err := s.svc.Open(ctx, protocol.Model{Run: s.local.Run, Version: m.Version, Params: m.Params})
			if errors.Is(err, ledger.ErrBudgetExhausted) {
				s.logf("budget spent (%v); stopping the run", err)
				_, serr := srv.Stop(ctx, &pb.StopRequest{Run: s.local.Run, Reason: protocol.StopTargetEpsilon})
				if serr == nil {
					s.over()
				}
				return serr
			}
			if err != nil {
				return err
			}
			s.stats.add(func(st *Stats) { st.RoundsOpened++ })
			released, err = s.collect(ctx, srv, round, m, l)
			if errors.Is(err, errBudgetStop) {
				s.over()
				return nil
			}
			if err != nil {
				return err
			}
			if ctx.Err() != nil {
				return nil
			}
		}
		after = m.Version
		if s.stale {
			// The server refused the batch as computed on a model version
			// it does not wait for: take its current model.
			s.stale = false
			after = -1
		}
		if s.connects.Load() != epoch {
			// Reconnected since the model was fetched: the server may have
			// restarted from a checkpoint older than this version, and
			// would never publish a later one. Take its current model.
			s.logf("reconnected to the server; asking for its current model")
			after = -1
		}
	}
}

// watchConnects returns a counter of the times conn became ready, kept up
// to date until ctx ends.
func watchConnects(ctx context.Context, conn *grpc.ClientConn) *atomic.Int64 {
	var n atomic.Int64
	st := conn.GetState()
	if st == connectivity.Ready {
		n.Add(1)
	}
	go func() {
		for conn.WaitForStateChange(ctx, st) {
			if st = conn.GetState(); st == connectivity.Ready {
				n.Add(1)
			}
		}
	}()
	return &n
}

// collect relays the open round to its sampled clients, waits for their
// reports (all of them, or the timeout), and releases. It reports whether a
// batch was released; an error is fatal (a debited batch not forwarded).
func (s *Shuffler) collect(ctx context.Context, srv pb.ServerClient, round protocol.Round, m *pb.Model, l *ledger.Ledger) (bool, error) {
	start := time.Now()
	if s.cpuMark == 0 {
		s.cpuMark = processCPU()
	}
	sampled := s.svc.Sampled()
	roundIDs := s.spareIDs
	if s.spareIDs = nil; roundIDs == nil {
		roundIDs = make(map[[protocol.ReportIDSize]byte]struct{}, len(sampled))
	}
	r := &openRound{id: round.ID, keyID: uint8(m.KeyId), ids: roundIDs,
		expected: len(sampled), complete: make(chan struct{}), size: s.run.ReportBytes}
	// The clients seal their reports to the relayed model's run and the
	// round id: the run's id, or in a sharded run the shard's
	// (shard.RunID), so that a report released by one shard's batch does
	// not open in another shard's batch of the same round id.
	relay := &pb.Model{Run: s.local.Run, Version: m.Version, Params: m.Params, KeyId: m.KeyId}
	s.mu.Lock()
	s.round = r
	byWorker := map[*worker][]int64{}
	for _, c := range sampled {
		if w := s.workers[s.lo+int64(c)]; w != nil {
			byWorker[w] = append(byWorker[w], s.lo+int64(c))
		}
	}
	s.mu.Unlock()
	timer := time.NewTimer(s.cfg.RoundTimeout) // the deadline runs from the relay
	defer timer.Stop()
	// Dummies for every slot are made while the round runs, whoever
	// delivers: constant work, so the release time does not depend on how
	// many clients dropped out. With ReleaseWhenComplete (whose assumption
	// makes the count harmless) they are made at release, as needed.
	var pre chan struct{}
	if s.dummies != nil {
		s.dummies.set(round, r.keyID, len(sampled))
		if !s.cfg.ReleaseWhenComplete {
			pre = make(chan struct{})
			go func() { defer close(pre); s.dummies.precompute(round, len(sampled)) }()
		}
	}
	for w, cs := range byWorker {
		select {
		case w.send <- &pb.Assignment{Round: round.ID, Model: relay, Clients: cs, Config: s.runPB}:
		case <-w.done:
		}
	}
	complete := r.complete
	if !s.cfg.ReleaseWhenComplete {
		complete = nil // release at the deadline, never earlier
	}
	select {
	case <-complete:
	case <-timer.C:
	case <-ctx.Done():
	}
	if pre != nil {
		<-pre
	}
	if ctx.Err() != nil {
		// Stopping mid-round: abandon it rather than release it early.
		s.mu.Lock()
		s.round = nil
		s.mu.Unlock()
		s.svc.Abandon()
		s.logf("round %d abandoned (stopping); nothing released or debited", round.ID)
		return false, nil
	}
	s.mu.Lock()
	s.round = nil
	ids := make([][protocol.ReportIDSize]byte, 0, len(r.ids))
	for id := range r.ids {
		ids = append(ids, id)
	}
	if s.prevIDs != nil { // two rounds old: nothing reads it any more
		clear(s.prevIDs)
		s.spareIDs = s.prevIDs
	}
	s.prevIDs = r.ids
	got := r.accepted
	s.mu.Unlock()
	s.budget.set(ids)
	rel, err := s.svc.Release(context.WithoutCancel(ctx), func(ctx context.Context, b protocol.Batch) error {
		return s.forward(ctx, srv, b)
	})
	replays := s.budget.replays()
	if len(replays) > 0 {
		s.stats.add(func(st *Stats) { st.Rejected[RejectReplay] += int64(len(replays)) })
		s.cfg.Metrics.ReportsRejected(RejectReplay.Label(), int64(len(replays)))
		s.cfg.Dashboard.Error(fmt.Sprintf("round %d: %d report ids replayed from earlier rounds; round discarded", round.ID, len(replays)))
		s.logf("round %d: %d report ids replayed from earlier rounds (durable check); round discarded", round.ID, len(replays))
	}
	switch {
	case err == nil:
		s.stats.add(func(st *Stats) { st.Released++; st.Forwarded += int64(rel.Reports); st.Dummies += int64(rel.Dummies) })
		s.cfg.Metrics.Dummies(rel.Dummies)
		if st, gerr := l.Statement(); gerr == nil { // the run's one number, once per round
			s.cfg.Metrics.RoundReleased(rel.Reports, time.Since(start), st.Epsilon, int(l.Rounds()))
			s.mu.Lock()
			connected := len(s.workers)
			s.mu.Unlock()
			s.cfg.Dashboard.Released(rel.Reports, rel.Dummies, connected, time.Since(start), st.Epsilon, l.Rounds())
			s.cfg.Dashboard.EpsilonLabel(st.Label())
		}
		cpu := processCPU()
		s.logf("round %d released: %d reports (%d dummies), model version %d, %.3fs; ledger %d rounds, epsilon %s; shuffler CPU %.3fs since the last release",
			round.ID, rel.Reports, rel.Dummies, m.Version, time.Since(start).Seconds(), l.Rounds(), epsString(l), (cpu - s.cpuMark).Seconds())
		s.cpuMark = cpu
		return true, nil
	case rel.Round != 0 && errors.Is(err, errStaleModel):
		// The server restarted from an older checkpoint while the round
		// ran: it published another model version than the batch's.
		// Debited, not applied; the next round runs on its current model.
		s.stale = true
		s.stats.add(func(st *Stats) { st.Unused++ })
		s.logf("round %d debited, refused by the server, unused (model version %d): %v", round.ID, m.Version, err)
		return true, nil
	case rel.Round != 0 && errors.Is(err, errAlreadyDelivered):
		// Sharded run: another replica of this shard delivered the round
		// before it died. Debited, not released; the next model follows.
		s.logf("round %d debited, not released: %v", round.ID, err)
		return true, nil
	case rel.Round != 0: // debited, not forwarded
		return false, err
	case errors.Is(err, shard.ErrLeaseLost), errors.Is(err, ledger.ErrFenced):
		// Another replica may serve the shard now (or does: its lease
		// advanced the shard's fence, and the debit's transaction refused
		// this one's): stop, debiting nothing.
		return false, err
	case errors.Is(err, ledger.ErrBudgetExhausted):
		s.stats.add(func(st *Stats) { st.Discarded++ })
		s.cfg.Metrics.RoundDiscarded(telemetry.ReasonBudgetExhausted)
		s.cfg.Dashboard.Status("budget spent: the ledger refused the next round")
		s.logf("round %d: budget spent; stopping the run", round.ID)
		_, serr := srv.Stop(ctx, &pb.StopRequest{Run: s.local.Run, Reason: protocol.StopTargetEpsilon})
		if serr != nil {
			return false, serr
		}
		return false, errBudgetStop
	default:
		s.stats.add(func(st *Stats) { st.Discarded++ })
		reason := telemetry.Rejection(err)
		if errors.Is(err, errReplayed) {
			reason = telemetry.ReasonReplay
		}
		s.cfg.Metrics.RoundDiscarded(reason)
		s.cfg.Dashboard.Error(fmt.Sprintf("round %d discarded (%d of %d reports): %s", round.ID, got, s.local.PerRound, reason))
		s.logf("round %d discarded (%d of %d reports): %v", round.ID, got, s.local.PerRound, err)
		return false, nil
	}
}

// errBudgetStop ends the round loop after the server was told to stop.
var errBudgetStop = errors.New("budget spent")

// getModel long-polls the server for the model after version after. A
// server that goes away (codes.Unavailable) is waited for, at most
// ConnectTimeout since it was lost; then the error names it.
func (s *Shuffler) getModel(ctx context.Context, srv pb.ServerClient, after int64) (*pb.Model, error) {
	var lostAt time.Time
	for {
		mctx, cancel := context.WithTimeout(ctx, s.cfg.ModelTimeout)
		m, err := srv.GetModel(mctx, &pb.GetModelRequest{Run: s.local.Run, AfterVersion: after}, grpc.MaxCallRecvMsgSize(modelLimit(s.run)))
		late := mctx.Err() == context.DeadlineExceeded && ctx.Err() == nil
		cancel()
		if err != nil && late {
			return nil, fmt.Errorf("shuffler: the server at %s published no model after version %d within %v (--model-timeout): %w", s.cfg.Server, after, s.cfg.ModelTimeout, err)
		}
		if err == nil || ctx.Err() != nil || status.Code(err) != codes.Unavailable {
			if err != nil {
				err = fmt.Errorf("shuffler: model from the server: %w", err)
			}
			return m, err
		}
		if lostAt.IsZero() {
			lostAt = time.Now()
			s.logf("lost the server at %s (%v); waiting for it up to %v", s.cfg.Server, err, s.cfg.ConnectTimeout)
		}
		// The server may come back from a checkpoint older than after, and
		// would never publish a later version: take its current model.
		after = -1
		left := s.cfg.ConnectTimeout - time.Since(lostAt)
		if left <= 0 {
			return nil, fmt.Errorf("shuffler: the server went away before the run finished: %w",
				&PeerError{Peer: "the server", Addr: s.cfg.Server, Waited: time.Since(lostAt), Err: err})
		}
		if werr := waitReachable(ctx, pki.RoleServer, s.cfg.Server, s.cfg.ServerTLS, left); werr != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("shuffler: the server went away before the run finished: %w", werr)
		}
		select { // the connection's own backoff (at most a second) may still run
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// checkBehind refuses to go on when the server has received a round of
// the run above the ledger's last debited round: every round the server
// receives was debited first (the debit precedes the release), so the
// ledger has lost rounds (a ledger lost, replaced or restored from an old
// backup) or another shuffler serves the run; a debit now would count the
// run's rounds again from there (docs/proofs/ledger-continuity.md). The
// server is untrusted: this check only adds to the state directory's
// (ShufflerState), which does not rest on what the server says.
func (s *Shuffler) checkBehind(m *pb.Model, l *ledger.Ledger) error {
	last := l.LastRound()
	if m.LastRound <= max(last, 0) {
		return nil
	}
	where := fmt.Sprintf("(%T)", s.cfg.Store)
	if st, ok := s.cfg.Store.(fmt.Stringer); ok {
		where = st.String()
	}
	if s.cfg.History != nil {
		where = s.cfg.History.Where()
	}
	return fmt.Errorf("shuffler: the server has received round %d of run %q, but the ledger %s has debited the run only to round %d; %s: %w",
		m.LastRound, s.local.Run, where, max(last, 0), recoverHint, ErrLedgerHistory)
}
