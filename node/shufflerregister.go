package node

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	pb "github.com/shuffledp/shuffledp/proto/shuffledp/v1"
)

// registerLogEvery is how often a shuffler waiting for clients logs how
// many are registered.
var registerLogEvery = 30 * time.Second

// worker is one client process's Work stream.
type worker struct {
	send chan *pb.Assignment
	done chan struct{}
	// held counts the clients registered to this stream (under s.mu);
	// gone is closed when a later registration took the last of them, so
	// that a stream whose clients all registered again elsewhere ends
	// instead of being held open.
	held int
	gone chan struct{}
}

// waitClients waits, before the first round, until MinConnected clients
// (by default the whole population) are registered, at most
// RegisterTimeout, logging how many are every registerLogEvery;
// afterwards rounds open whoever is connected.
func (s *Shuffler) waitClients(ctx context.Context) error {
	if s.started {
		return nil
	}
	need := s.cfg.MinConnected
	if need == 0 {
		need = s.local.Population
	}
	deadline := time.NewTimer(s.cfg.RegisterTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(registerLogEvery)
	defer tick.Stop()
	logged, start := false, time.Now()
	for {
		s.mu.Lock()
		have, ch := len(s.workers), s.regCh
		s.mu.Unlock()
		if have >= need {
			s.started = true
			s.logf("%d of %d clients registered (the run starts at %d); starting", have, s.local.Population, need)
			return nil
		}
		if !logged {
			s.logf("waiting for clients: %d of %d registered, the run starts when %d are (--min-connected; waiting up to %v, --register-timeout)",
				have, s.local.Population, need, s.cfg.RegisterTimeout)
			logged = true
		}
		select {
		case <-ch:
		case <-tick.C:
			s.logf("waiting for clients: %d of %d registered, the run starts when %d are (%v waited of %v)",
				have, s.local.Population, need, time.Since(start).Round(time.Second), s.cfg.RegisterTimeout)
		case <-deadline.C:
			return fmt.Errorf("shuffler: %d of %d clients registered within %v (--register-timeout); the run starts when %d are (--min-connected): are the client processes running, and do they reach this shuffler?",
				have, s.local.Population, s.cfg.RegisterTimeout, need)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func uniqueWorkers(m map[int64]*worker) []*worker {
	seen := map[*worker]bool{}
	var out []*worker
	for _, w := range m {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// Work implements the Shuffler service: register the caller's clients
// (every credential checked, message by message: receiveRegistration) and
// stream their rounds.
func (s *Shuffler) Work(stream grpc.BidiStreamingServer[pb.WorkRequest, pb.Assignment]) error {
	// The stream keeps its clients' indices only, as runs of consecutive
	// ones (a pool's range is one run): its messages, with their
	// credentials, are garbage once read (TestShufflerMemoryPerClient,
	// TestRegistrationPeakPerClient).
	clients, registered, err := s.receiveRegistration(stream)
	if err != nil {
		return err
	}
	w := &worker{send: make(chan *pb.Assignment, 4), done: make(chan struct{}), gone: make(chan struct{})}
	s.mu.Lock()
	if s.finished {
		s.mu.Unlock()
		return stream.Send(&pb.Assignment{Finished: true})
	}
	clients.each(func(c int64) {
		old := s.workers[c]
		if old == w {
			return
		}
		if old != nil {
			if old.held--; old.held == 0 {
				close(old.gone)
			}
		}
		s.workers[c] = w
		w.held++
	})
	close(s.regCh)
	s.regCh = make(chan struct{})
	s.cfg.Dashboard.Connected(len(s.workers))
	s.mu.Unlock()
	// Accepted: say so (the client logs "registered" on this, not before).
	ackErr := stream.SendHeader(metadata.Pairs(registeredKey, strconv.Itoa(registered)))
	defer func() {
		close(w.done)
		s.mu.Lock()
		clients.each(func(c int64) {
			if s.workers[c] == w {
				delete(s.workers, c)
			}
		})
		close(s.regCh)
		s.regCh = make(chan struct{})
		s.cfg.Dashboard.Connected(len(s.workers))
		s.mu.Unlock()
	}()
	if ackErr != nil {
		return ackErr
	}
	for {
		select {
		case a := <-w.send:
			if err := stream.Send(a); err != nil {
				return err
			}
			if a.Finished {
				return nil
			}
		case <-s.stopping:
			return status.Error(codes.Unavailable, "the shuffler is stopping before the run finished")
		case <-w.gone:
			return status.Error(codes.Aborted, "every client of this stream registered again on another stream")
		case <-stream.Context().Done():
			return stream.Context().Err()
		}
	}
}
