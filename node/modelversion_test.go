package node

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/shuffledp/shuffledp/ledger"
	pb "github.com/shuffledp/shuffledp/proto/shuffledp/v1"
	"github.com/shuffledp/shuffledp/protocol"
)

// handoffServer is a Server with no transport: its loop's side (Next) and
// the shuffler's (SubmitBatch, GetModel, Stop) are called directly.
func handoffServer(t *testing.T) (*Server, func(round, version int64) *pb.Batch) {
	t.Helper()
	key, err := protocol.GenerateKey(1)
	if err != nil {
		t.Fatal(err)
	}
	sealer, err := protocol.NewHPKESealer(key.Config, 3)
	if err != nil {
		t.Fatal(err)
	}
	run := protocol.RunConfig{Run: "r", PerRound: 2, MinBatch: 2, ReportBytes: 3 + protocol.HPKEOverhead}
	s := &Server{cfg: ServerConfig{BatchTimeout: time.Minute}, key: key, run: run, changed: make(chan struct{}),
		stops: make(chan string, 1), stopping: make(chan struct{})}
	batch := func(round, version int64) *pb.Batch {
		var reps []byte
		for range 2 {
			r, err := sealer.Seal(protocol.Binding{Run: "r", Round: round}, []byte{1, 2, 3})
			if err != nil {
				t.Fatal(err)
			}
			reps = append(reps, r...)
		}
		return &pb.Batch{Run: "r", Round: round, ReportBytes: int64(run.ReportBytes), Reports: reps, ModelVersion: version}
	}
	return s, batch
}

// next runs the loop's Next(version) in the background.
func next(s *Server, version int64) chan error {
	out := make(chan error, 1)
	go func() {
		b, err := s.Next(context.Background(), protocol.Model{Run: "r", Version: version, Params: []float64{0}})
		if err == nil && b.ModelVersion != version {
			err = errors.New("Next returned a batch of another model version")
		}
		out <- err
	}()
	return out
}

// waitPublished waits until GetModel returns the model of version v.
func waitPublished(t *testing.T, s *Server, v int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m, err := s.GetModel(ctx, &pb.GetModelRequest{Run: "r", AfterVersion: v - 1})
	if err != nil || m.Version != v {
		t.Fatalf("GetModel after %d: %v, %v; want version %d", v-1, m, err, v)
	}
}

// TestBatchAppliedOnlyToItsModelVersion: the server hands the loop a batch
// only if it was computed on the model version the loop waits for. A batch
// of an older version (a restarted server resumed from an older
// checkpoint), of a newer one, or a second batch of a model whose batch
// was taken is refused with Aborted (the shuffler counts the round debited
// and unused); a batch that arrives while no model is published (before
// the first, or while the loop applies the last batch) waits for the next
// publication and is judged against it; and once a model's batch is taken,
// GetModel hands that model out no more: it waits for the next.
func TestBatchAppliedOnlyToItsModelVersion(t *testing.T) {
	s, batch := handoffServer(t)
	ctx := context.Background()
	submit := func(b *pb.Batch) chan error {
		out := make(chan error, 1)
		go func() { _, err := s.SubmitBatch(ctx, b); out <- err }()
		return out
	}
	// Before any model is published: judged against the first.
	early := submit(batch(16, 15))
	done := next(s, 10)
	if err := <-early; status.Code(err) != codes.Aborted {
		t.Fatalf("batch of version 15 sent before the server published version 10: %v, want Aborted", err)
	}
	waitPublished(t, s, 10)
	for _, v := range []int64{15, 9, 11} {
		if err := <-submit(batch(16, v)); status.Code(err) != codes.Aborted {
			t.Fatalf("batch of model version %d while the loop waits for 10: %v, want Aborted", v, err)
		}
	}
	if err := <-submit(batch(17, 10)); err != nil {
		t.Fatalf("batch of the published version: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// Taken: GetModel does not hand out version 10 again (any version:
	// after -1), and a second batch of version 10 waits for the next
	// model and is refused.
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	m, err := s.GetModel(short, &pb.GetModelRequest{Run: "r", AfterVersion: -1})
	cancel()
	if status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("GetModel while the loop applies the batch: %v, %v; want it to wait for the next model", m, err)
	}
	again := submit(batch(18, 10))
	got := make(chan *pb.Model, 1)
	go func() {
		m, _ := s.GetModel(ctx, &pb.GetModelRequest{Run: "r", AfterVersion: -1})
		got <- m
	}()
	done = next(s, 11)
	if m := <-got; m == nil || m.Version != 11 {
		t.Fatalf("GetModel after -1 returned %v, want version 11", m)
	}
	if err := <-again; status.Code(err) != codes.Aborted {
		t.Fatalf("second batch of a taken model: %v, want Aborted", err)
	}
	if err := <-submit(batch(19, 11)); err != nil {
		t.Fatalf("batch of version 11: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestStopRoundsEndsTheLoop: a shuffler's Stop with reason rounds ends
// Next with an error wrapping protocol.ErrRoundsDebited and
// ledger.ErrBudgetExhausted (the loop stops cleanly); target-epsilon with
// the latter only.
func TestStopRoundsEndsTheLoop(t *testing.T) {
	for _, tc := range []struct {
		reason string
		rounds bool
	}{{protocol.StopRounds, true}, {protocol.StopTargetEpsilon, false}} {
		s, _ := handoffServer(t)
		done := next(s, 3)
		waitPublished(t, s, 3)
		if _, err := s.Stop(context.Background(), &pb.StopRequest{Run: "r", Reason: tc.reason}); err != nil {
			t.Fatal(err)
		}
		err := <-done
		if !errors.Is(err, ledger.ErrBudgetExhausted) || errors.Is(err, protocol.ErrRoundsDebited) != tc.rounds {
			t.Fatalf("reason %s: Next returned %v", tc.reason, err)
		}
	}
}

// TestShufflerStaleBatchAndPlannedRounds: the stand-in server refuses the
// first batch as computed on a stale model (Aborted, as a
// server restarted from an older checkpoint does) and plans 3 rounds but
// needs 3 applied batches. The shuffler counts the refused round debited
// and unused, asks for the server's current model afresh (version 0
// again: the refused batch moved nothing), runs the next rounds on it,
// carrying each round's model version in its batch, and once its ledger
// holds the 3 planned rounds it debits no more: it stops the run (reason
// rounds), tells its clients the run is finished and returns nil.
func TestShufflerStaleBatchAndPlannedRounds(t *testing.T) {
	r := newAttackRig(t, rigOptions{n: 10, k: 4, rounds: 3, planned: 3, staleFirst: true})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	w := r.work(ctx)
	var versions []int64
	for {
		a, err := w.Recv()
		if err != nil {
			t.Fatalf("work stream: %v (stats %+v)", err, r.sh.Stats())
		}
		if a.Finished {
			break
		}
		versions = append(versions, a.Model.GetVersion())
		reps, _ := r.honest(a)
		if ack := r.submit(ctx, a.Round, reps); ack.Accepted != 4 {
			t.Fatalf("round %d: %v", a.Round, ack)
		}
	}
	select {
	case err := <-r.done:
		r.done <- err // for the rig's cleanup
		if err != nil {
			t.Fatalf("shuffler: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("the shuffler did not return")
	}
	if want := []int64{0, 0, 1}; !slices.Equal(versions, want) {
		t.Fatalf("rounds relayed models %v, want %v (the refused round's model again, then the next)", versions, want)
	}
	got := r.srv.received()
	r.srv.mu.Lock()
	stale, stops := r.srv.stale, r.srv.stops
	r.srv.mu.Unlock()
	if len(stale) != 1 || stale[0].ModelVersion != 0 || len(got) != 2 || got[0].ModelVersion != 0 || got[1].ModelVersion != 1 {
		t.Fatalf("refused %v, applied %v: want one refused batch of version 0, then versions 0 and 1", stale, got)
	}
	if !slices.Equal(stops, []string{protocol.StopRounds}) {
		t.Fatalf("stops %v, want [%s]", stops, protocol.StopRounds)
	}
	if rounds := r.ledgerRounds(); len(rounds) != 3 {
		t.Fatalf("ledger rounds %v, want the 3 planned (the refused one included)", rounds)
	}
	if st := r.sh.Stats(); st.Unused != 1 || st.Released != 2 || st.RoundsOpened != 3 {
		t.Fatalf("stats %+v: want 3 opened, 2 released, 1 unused", st)
	}
}
