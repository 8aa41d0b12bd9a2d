package node

// Failure and attack tests of the shuffler node: a real
// Shuffler on a real TLS listener, driven by a hand-written client over
// gRPC and forwarding to a stand-in server (fakeServer) that records every
// batch exactly as it arrives on the wire. The stand-in holds the HPKE key,
// so it can also tell which reports the shuffler forwarded.

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"net"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/ledger"
	"github.com/shuffledp/shuffledp/pki"
	pb "github.com/shuffledp/shuffledp/proto/shuffledp/v1"
	"github.com/shuffledp/shuffledp/protocol"
	"github.com/shuffledp/shuffledp/route"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// attackReport is the report size (before sealing) of the stand-in run.
const attackReport = 8

// fakeServer is the server's gRPC service as a stand-in: it publishes a run
// specification and a model of version v after v batches, records every
// batch the shuffler submits (the message and the metadata as received) and
// finishes the run after rounds batches.
type fakeServer struct {
	pb.UnimplementedServerServer
	spec   *pb.RunSpec
	key    protocol.ReceiverKey
	rounds int
	// staleFirst refuses the first batch as computed on a stale model
	// (Aborted, as a restarted server does): it is recorded in
	// stale and the model version stays.
	staleFirst bool
	stale      []*pb.Batch

	mu       sync.Mutex
	changed  chan struct{}
	batches  []*pb.Batch
	metadata []metadata.MD
	stops    []string
}

func (f *fakeServer) GetRun(context.Context, *pb.GetRunRequest) (*pb.RunSpec, error) {
	return f.spec, nil
}

func (f *fakeServer) GetModel(ctx context.Context, req *pb.GetModelRequest) (*pb.Model, error) {
	for {
		f.mu.Lock()
		v, done, ch := int64(len(f.batches)), len(f.batches) >= f.rounds || len(f.stops) > 0, f.changed
		f.mu.Unlock()
		if done {
			return &pb.Model{Run: f.spec.Config.Run, Finished: true}, nil
		}
		if v > req.AfterVersion {
			return &pb.Model{Run: f.spec.Config.Run, Version: v, Params: make([]float64, f.spec.Config.Dim), KeyId: uint32(f.key.Config.ID)}, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (f *fakeServer) SubmitBatch(ctx context.Context, b *pb.Batch) (*pb.BatchAck, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	f.mu.Lock()
	if f.staleFirst && len(f.stale) == 0 {
		f.stale = append(f.stale, proto.Clone(b).(*pb.Batch))
		f.mu.Unlock()
		return nil, status.Errorf(codes.Aborted, "batch computed on model version %d: stale", b.ModelVersion)
	}
	f.batches = append(f.batches, proto.Clone(b).(*pb.Batch))
	f.metadata = append(f.metadata, md.Copy())
	close(f.changed)
	f.changed = make(chan struct{})
	f.mu.Unlock()
	return &pb.BatchAck{}, nil
}

func (f *fakeServer) Stop(_ context.Context, req *pb.StopRequest) (*pb.StopAck, error) {
	f.mu.Lock()
	f.stops = append(f.stops, req.Reason)
	close(f.changed)
	f.changed = make(chan struct{})
	f.mu.Unlock()
	return &pb.StopAck{}, nil
}

// received returns the batches received so far.
func (f *fakeServer) received() []*pb.Batch {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*pb.Batch(nil), f.batches...)
}

// attackRig is a shuffler node between a fakeServer and a test client.
type attackRig struct {
	t      testing.TB
	srv    *fakeServer
	sh     *Shuffler
	store  ledger.Backend
	run    protocol.RunConfig
	enr    *pki.Enroller
	sealer *protocol.HPKESealer
	shuf   pb.ShufflerClient
	done   chan error // the shuffler's Run result
	key2   protocol.ReceiverKey
}

// rigOptions vary newAttackRig's run.
type rigOptions struct {
	n, k, rounds int
	timeout      time.Duration
	target       float64
	// secondKey publishes a second key config (id 2) beside the round's.
	secondKey bool
	// store is the shuffler's ledger (nil: in memory).
	store ledger.Backend
	// planned is the RunSpec's planned rounds (0: none); staleFirst
	// makes the stand-in server refuse the first batch as stale.
	planned    int64
	staleFirst bool
	// atDeadline releases every round at its deadline (the default of a
	// deployment); otherwise the rig releases as soon as every sampled
	// client delivered (ReleaseWhenComplete), so that tests of complete
	// rounds do not wait for the timeout.
	atDeadline bool
}

// newAttackRig starts a fakeServer (run "attack": n clients, k a round,
// rounds batches) and a Shuffler node on loopback TLS listeners, and dials
// the shuffler as a client would.
func newAttackRig(t testing.TB, o rigOptions) *attackRig {
	t.Helper()
	dir := t.TempDir()
	pkiDir := filepath.Join(dir, "pki")
	if err := pki.Init(pkiDir, nil); err != nil {
		t.Fatal(err)
	}
	key, err := protocol.GenerateKey(1)
	if err != nil {
		t.Fatal(err)
	}
	kc, err := key.Config.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	keys := [][]byte{kc}
	var key2 protocol.ReceiverKey
	if o.secondKey {
		if key2, err = protocol.GenerateKey(2); err != nil {
			t.Fatal(err)
		}
		kc2, err := key2.Config.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, kc2)
	}
	run := &pb.RunConfig{Run: "attack", Model: "logreg", Dim: 4, Randomizer: "rinf", ClipNorm: protocol.NormL2, Clip: 1,
		Eps0: 2, Population: int64(o.n), PerRound: int64(o.k), MinBatch: int64(o.k), ReportBytes: attackReport + protocol.HPKEOverhead}
	fs := &fakeServer{spec: &pb.RunSpec{Config: run, KeyConfigs: keys, Delta: 1e-5, TargetEpsilon: o.target,
		Dataset: &pb.Dataset{Name: "synthetic", Seed: 1}, Rounds: o.planned}, key: key, rounds: o.rounds, changed: make(chan struct{}),
		staleFirst: o.staleFirst}
	stls, err := pki.ServerTLS(filepath.Join(pkiDir, pki.RoleServer), pki.RoleServer)
	if err != nil {
		t.Fatal(err)
	}
	g := grpc.NewServer(serverOptions(stls, serverLimits{recv: specLimit})...)
	pb.RegisterServerServer(g, fs)
	slis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go g.Serve(slis)
	t.Cleanup(g.Stop)

	shTLS, _ := pki.ServerTLS(filepath.Join(pkiDir, pki.RoleShuffler), pki.RoleShuffler)
	dialTLS, _ := pki.ClientTLS(filepath.Join(pkiDir, pki.RoleShuffler), pki.RoleShuffler)
	enr, err := pki.LoadEnroller(pkiDir)
	if err != nil {
		t.Fatal(err)
	}
	if o.timeout == 0 {
		o.timeout = time.Minute
	}
	store := o.store
	if store == nil {
		store = ledger.NewMemoryStore()
	}
	sh, err := NewShuffler(ShufflerConfig{Server: slis.Addr().String(), ServerTLS: dialTLS, TLS: shTLS, Enroller: enr,
		Store: store, Delta: 1e-5, TargetEpsilon: o.target, RoundTimeout: o.timeout, ReleaseWhenComplete: !o.atDeadline})
	if err != nil {
		t.Fatal(err)
	}
	hlis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sh.Run(ctx, hlis) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("the shuffler did not stop within 10 s")
		}
	})
	ctls, err := pki.ClientTLS(filepath.Join(pkiDir, pki.RoleClient), pki.RoleClient)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := dial(hlis.Addr().String(), ctls, pki.RoleShuffler)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	sealer, err := protocol.NewHPKESealer(key.Config, attackReport)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := runConfigFromPB(run)
	if err != nil {
		t.Fatal(err)
	}
	return &attackRig{t: t, srv: fs, sh: sh, store: store, run: rc, enr: enr, sealer: sealer,
		shuf: pb.NewShufflerClient(conn), done: done, key2: key2}
}

// work registers clients [0, n) with the shuffler and returns their stream
// of assignments.
func (r *attackRig) work(ctx context.Context) grpc.ServerStreamingClient[pb.Assignment] {
	r.t.Helper()
	req := &pb.WorkRequest{Run: r.run.Run}
	for c := range int64(r.run.Population) {
		req.Clients = append(req.Clients, &pb.ClientCredential{Client: c, Token: r.enr.Token(c)})
	}
	w, err := workCall(asClient(ctx, r.enr, 0), r.shuf, req, grpc.WaitForReady(true))
	if err != nil {
		r.t.Fatal(err)
	}
	return w
}

// seal returns a fresh sealed report for round (its content: client's id,
// so the stand-in server could tell reports apart if it opened them).
func (r *attackRig) seal(round int64, client int64) []byte {
	r.t.Helper()
	p := make([]byte, attackReport)
	p[0] = byte(client)
	s, err := r.sealer.Seal(protocol.Binding{Run: r.run.Run, Round: round}, p)
	if err != nil {
		r.t.Fatal(err)
	}
	return s
}

// submit sends reports (client -> sealed) for round in one Submit stream
// and returns the acknowledgement.
func (r *attackRig) submit(ctx context.Context, round int64, reps []*pb.Report) *pb.SubmitAck {
	r.t.Helper()
	st, err := r.shuf.Submit(asClient(ctx, r.enr, 0))
	if err != nil {
		r.t.Fatal(err)
	}
	for i := 0; i < len(reps); i += chunkReports {
		if err := st.Send(&pb.ReportChunk{Run: r.run.Run, Round: round, Reports: reps[i:min(i+chunkReports, len(reps))]}); err != nil {
			r.t.Fatal(err)
		}
	}
	ack, err := st.CloseAndRecv()
	if err != nil {
		r.t.Fatal(err)
	}
	return ack
}

// honest returns one fresh report per client of a, with their report ids.
func (r *attackRig) honest(a *pb.Assignment) ([]*pb.Report, map[[protocol.ReportIDSize]byte]int64) {
	r.t.Helper()
	ids := map[[protocol.ReportIDSize]byte]int64{}
	var reps []*pb.Report
	for _, c := range a.Clients {
		s := r.seal(a.Round, c)
		h, err := protocol.ParseHeader(s)
		if err != nil {
			r.t.Fatal(err)
		}
		ids[h.ReportID] = c
		reps = append(reps, &pb.Report{Client: c, Token: r.enr.Token(c), Sealed: s})
	}
	return reps, ids
}

// ledgerRounds returns the shuffler ledger's rounds (nil before the first debit).
func (r *attackRig) ledgerRounds() []int64 {
	r.t.Helper()
	es, err := r.store.Entries(context.Background(), r.run.Run)
	if err != nil {
		r.t.Fatal(err)
	}
	var out []int64
	for _, e := range es {
		out = append(out, e.Round)
	}
	return out
}

// recv returns the next assignment, failing the test after 30 s.
func recv(t testing.TB, w grpc.ServerStreamingClient[pb.Assignment]) *pb.Assignment {
	t.Helper()
	type res struct {
		a   *pb.Assignment
		err error
	}
	ch := make(chan res, 1)
	go func() { a, err := w.Recv(); ch <- res{a, err} }()
	select {
	case x := <-ch:
		if x.err != nil {
			t.Fatal(x.err)
		}
		return x.a
	case <-time.After(30 * time.Second):
		t.Fatal("no assignment within 30 s")
	}
	return nil
}

// randomID returns a random report id.
func randomID(t testing.TB) [protocol.ReportIDSize]byte {
	var id [protocol.ReportIDSize]byte
	if _, err := rand.Read(id[:]); err != nil {
		t.Fatal(err)
	}
	return id
}

// TestDroppedAndSlowClients: rounds are released at their deadline with a
// dummy report in the place of every sampled client that did not deliver:
// a round in which nobody reports (4 dummies), one in which one sampled
// client never reports (1 dummy), and one in which every client reports,
// the last one late but before the deadline (no dummy, and still released
// at the deadline, not when complete). Every batch is exactly k reports of
// the run's length, every one opens at the server, the ledger debits every
// round as a complete round, and the dummies are counted in the shuffler's
// own stats only.
func TestDroppedAndSlowClients(t *testing.T) {
	// Long enough that round 3's submissions, the slow one after a pause
	// of timeout/8, reach the shuffler before its deadline on a busy machine.
	const timeout = 1500 * time.Millisecond
	r := newAttackRig(t, rigOptions{n: 10, k: 4, rounds: 3, timeout: timeout, atDeadline: true})
	ctx := context.Background()
	w := r.work(ctx)

	// Round 1: nobody reports.
	a := recv(t, w)
	if a.Round != 1 || len(a.Clients) != 4 {
		t.Fatalf("first assignment %v", a)
	}
	// Round 2: the last sampled client never reports.
	a2 := recv(t, w)
	if a2.Round != 2 || a2.Model.Version != a.Model.Version+1 {
		t.Fatalf("after a round of dummies: round %d of model %d, want round 2 of model %d", a2.Round, a2.Model.Version, a.Model.Version+1)
	}
	reps2, ids2 := r.honest(a2)
	if ack := r.submit(ctx, a2.Round, reps2[:3]); ack.Accepted != 3 {
		t.Fatalf("round 2: %v", ack)
	}
	// Round 3: all report, the last one late but before the deadline.
	a3 := recv(t, w)
	if a3.Round != 3 {
		t.Fatalf("third assignment %v", a3)
	}
	start := time.Now()
	// Round 2's missing report, late: refused and counted.
	if ack := r.submit(ctx, a2.Round, reps2[3:]); ack.Accepted != 0 || ack.Rejected[string(RejectWrongRound)] != 1 {
		t.Fatalf("late report: %v", ack)
	}
	reps, ids3 := r.honest(a3)
	if ack := r.submit(ctx, a3.Round, reps[:3]); ack.Accepted != 3 {
		t.Fatalf("round 3: %v", ack)
	}
	time.Sleep(timeout / 8)
	if ack := r.submit(ctx, a3.Round, reps[3:]); ack.Accepted != 1 {
		t.Fatalf("round 3, slow client: %v", ack)
	}
	if a := recv(t, w); !a.Finished {
		t.Fatalf("after the last round: %v, want finished", a)
	}
	if el := time.Since(start); el < timeout*3/4 {
		t.Fatalf("complete round 3 released after %v, before its deadline %v", el, timeout)
	}
	got := r.srv.received()
	if len(got) != 3 {
		t.Fatalf("forwarded %d batches, want 3", len(got))
	}
	opener, err := protocol.NewHPKEOpener(attackReport, r.srv.key)
	if err != nil {
		t.Fatal(err)
	}
	wantReal := []map[[protocol.ReportIDSize]byte]int64{{}, ids2, ids3}
	wantDummies := []int{4, 1, 0}
	for i, b := range got {
		if b.Round != int64(i+1) || len(b.Reports) != 4*r.run.ReportBytes || b.ReportBytes != int64(r.run.ReportBytes) {
			t.Fatalf("batch %d: round %d, %d bytes; want round %d of 4 reports", i, b.Round, len(b.Reports), i+1)
		}
		real, seen := 0, map[[protocol.ReportIDSize]byte]bool{}
		for j := range 4 {
			sealed := b.Reports[j*r.run.ReportBytes : (j+1)*r.run.ReportBytes]
			h, err := protocol.ParseHeader(sealed)
			if err != nil || h.KeyID != r.srv.key.Config.ID || seen[h.ReportID] {
				t.Fatalf("batch %d report %d: header %+v, %v", i, j, h, err)
			}
			seen[h.ReportID] = true
			if _, err := opener.Open(protocol.Binding{Run: r.run.Run, Round: b.Round}, sealed); err != nil {
				t.Fatalf("batch %d report %d does not open at the server: %v", i, j, err)
			}
			if contains(wantReal[i], h.ReportID) {
				real++
			}
		}
		if real != 4-wantDummies[i] {
			t.Fatalf("batch %d: %d client reports, want %d", i, real, 4-wantDummies[i])
		}
	}
	if lr := r.ledgerRounds(); len(lr) != 3 {
		t.Fatalf("ledger rounds %v, want [1 2 3]", lr)
	}
	es, err := r.store.Entries(ctx, r.run.Run)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if e.Event.K != 4 || e.Event.N != 10 {
			t.Fatalf("round %d debited as %v, want a complete round of 4 of 10", e.Round, e.Event)
		}
	}
	if s := r.sh.Stats(); s.RoundsOpened != 3 || s.Discarded != 0 || s.Released != 3 || s.Accepted != 7 || s.Forwarded != 12 || s.Dummies != 5 {
		t.Fatalf("stats %+v", s)
	}
}

func contains[K comparable, V any](m map[K]V, k K) bool { _, ok := m[k]; return ok }

// forge returns a copy of sealed with a fresh random report id in its clear
// header: what a flooding client can make for free (the shuffler reads only
// the header; the ciphertext no longer opens, which only the server sees).
func forge(t testing.TB, sealed []byte) []byte {
	out := append([]byte(nil), sealed...)
	id := randomID(t)
	copy(out[2:2+protocol.ReportIDSize], id[:])
	return out
}

// TestFloodFromOneClient: one sampled client floods the shuffler with
// thousands of reports in one stream — fresh report ids as itself (each a
// duplicate), copies of its accepted report (replays) and reports in the
// name of an unsampled client of its own (not sampled) — while the other
// sampled clients report. Every flooded report is refused and counted by
// reason, the honest clients are served promptly, and the batch forwarded
// is exactly the four honest reports.
func TestFloodFromOneClient(t *testing.T) {
	const flood = 3000 // of each kind
	r := newAttackRig(t, rigOptions{n: 10, k: 4, rounds: 1})
	ctx := context.Background()
	w := r.work(ctx)
	a := recv(t, w)
	reps, ids := r.honest(a)
	attacker := a.Clients[0]
	if ack := r.submit(ctx, a.Round, reps[:1]); ack.Accepted != 1 {
		t.Fatalf("attacker's honest report: %v", ack)
	}
	sampled := map[int64]bool{}
	for _, c := range a.Clients {
		sampled[c] = true
	}
	var other int64
	for sampled[other] {
		other++
	}
	var bad []*pb.Report
	for range flood {
		bad = append(bad,
			&pb.Report{Client: attacker, Token: r.enr.Token(attacker), Sealed: forge(t, reps[0].Sealed)},
			&pb.Report{Client: attacker, Token: r.enr.Token(attacker), Sealed: reps[0].Sealed},
			&pb.Report{Client: other, Token: r.enr.Token(other), Sealed: forge(t, reps[0].Sealed)})
	}
	st, err := r.shuf.Submit(asClient(ctx, r.enr, 0))
	if err != nil {
		t.Fatal(err)
	}
	// The flood streams while two honest clients report; the round stays
	// open (the last honest client reports after the flood was answered),
	// so every flooded report meets the open round.
	floodAck := make(chan *pb.SubmitAck, 1)
	go func() {
		defer close(floodAck)
		for i := 0; i < len(bad); i += chunkReports {
			if err := st.Send(&pb.ReportChunk{Run: r.run.Run, Round: a.Round, Reports: bad[i:min(i+chunkReports, len(bad))]}); err != nil {
				t.Error(err)
				return
			}
		}
		ack, err := st.CloseAndRecv()
		if err != nil {
			t.Error(err)
			return
		}
		floodAck <- ack
	}()
	start := time.Now()
	if ack := r.submit(ctx, a.Round, reps[1:3]); ack.Accepted != 2 || len(ack.Rejected) != 0 {
		t.Fatalf("honest clients during the flood: %v", ack)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("honest clients waited %v during the flood", d)
	}
	ack := <-floodAck
	if ack == nil {
		t.FailNow()
	}
	want := map[string]int64{string(RejectDuplicate): flood, string(RejectReplay): flood, string(RejectNotSampled): flood}
	if ack.Accepted != 0 || len(ack.Rejected) != len(want) {
		t.Fatalf("flood: accepted %d, rejected %v; want none accepted, %v", ack.Accepted, ack.Rejected, want)
	}
	for k, v := range want {
		if ack.Rejected[k] != v {
			t.Errorf("flood: %s %d, want %d", k, ack.Rejected[k], v)
		}
	}
	if ack := r.submit(ctx, a.Round, reps[3:]); ack.Accepted != 1 {
		t.Fatalf("last honest client: %v", ack)
	}
	if a := recv(t, w); !a.Finished {
		t.Fatalf("after the round: %v", a)
	}
	got := r.srv.received()
	if len(got) != 1 || len(got[0].Reports) != 4*r.run.ReportBytes {
		t.Fatalf("forwarded %v", got)
	}
	for i := range 4 {
		h, _ := protocol.ParseHeader(got[0].Reports[i*r.run.ReportBytes:])
		if !contains(ids, h.ReportID) {
			t.Fatalf("forwarded report %d is not an honest one", i)
		}
	}
	s := r.sh.Stats()
	if s.Accepted != 4 || s.Forwarded != 4 || s.Rejected[RejectDuplicate] != flood || s.Rejected[RejectReplay] != flood || s.Rejected[RejectNotSampled] != flood {
		t.Fatalf("stats %+v", s)
	}
}

// The in-memory replay check of the previous round holds round after
// round while the shuffler recycles its sets of report ids (a round's set
// is the one of the round before the previous, cleared): in each of six
// rounds a report of the round before, resubmitted under another sampled
// client, is refused as a replay, and every honest report is accepted.
func TestReplayOfPreviousRoundEveryRound(t *testing.T) {
	const rounds = 6
	r := newAttackRig(t, rigOptions{n: 10, k: 4, rounds: rounds})
	ctx := context.Background()
	w := r.work(ctx)
	var prev []byte
	for round := int64(1); round <= rounds; round++ {
		a := recv(t, w)
		if a.Round != round {
			t.Fatalf("assignment of round %d, want %d", a.Round, round)
		}
		reps, _ := r.honest(a)
		if prev != nil {
			replay := &pb.Report{Client: reps[1].Client, Token: reps[1].Token, Sealed: prev}
			if ack := r.submit(ctx, a.Round, []*pb.Report{replay}); ack.Accepted != 0 || ack.Rejected[string(RejectReplay)] != 1 {
				t.Fatalf("round %d, round %d's report replayed: %v; want refused as a replay", round, round-1, ack)
			}
		}
		prev = reps[0].Sealed
		if ack := r.submit(ctx, a.Round, reps); ack.Accepted != 4 {
			t.Fatalf("round %d: %v", round, ack)
		}
	}
	if a := recv(t, w); !a.Finished { // every round released
		t.Fatalf("after round %d: %v", rounds, a)
	}
	if s := r.sh.Stats(); s.Released != rounds || s.Rejected[RejectReplay] != rounds-1 {
		t.Fatalf("stats %+v", s)
	}
}

// TestReplayIntoLaterRound: a report accepted in round 1 is replayed by a
// sampled client as its own into round 2 and into round 3. Into round 2
// (the round after its own) the shuffler refuses it on arrival (the
// in-memory check holds the open and the previous round's ids; the
// durable store holds the last debited round's, for a restarted
// shuffler), and the client then delivers its fresh report. Into round 3
// the shuffler cannot tell it from a fresh report (round 1's ids were
// pruned from the store with round 2's debit: docs/report-ids.md), so it
// is released with round 3's batch, but it does not open at the server:
// it is sealed for round 1, and the server opens a batch's reports for the
// batch's (run, round) (server.Server's open: Opener.Open(b.Binding(),
// report)), so the server aggregates round 1's report once, in round 1.
// Every round is debited once and released; the store ends holding only
// the last round's ids.
func TestReplayIntoLaterRound(t *testing.T) {
	r := newAttackRig(t, rigOptions{n: 10, k: 4, rounds: 3})
	ctx := context.Background()
	w := r.work(ctx)
	var first []byte
	for round := int64(1); round <= 3; round++ {
		a := recv(t, w)
		if a.Round != round {
			t.Fatalf("assignment of round %d, want %d", a.Round, round)
		}
		reps, _ := r.honest(a)
		switch round {
		case 1:
			first = reps[0].Sealed
		case 2:
			replay := &pb.Report{Client: reps[2].Client, Token: reps[2].Token, Sealed: first}
			if ack := r.submit(ctx, a.Round, []*pb.Report{replay}); ack.Accepted != 0 || ack.Rejected[string(RejectReplay)] != 1 {
				t.Fatalf("round 2, round 1's report replayed: %v; want refused as a replay", ack)
			}
		case 3:
			reps[2].Sealed = first // captured on the way, resubmitted as its own
		}
		if ack := r.submit(ctx, a.Round, reps); ack.Accepted != 4 {
			t.Fatalf("round %d: %v", round, ack)
		}
	}
	if a := recv(t, w); !a.Finished {
		t.Fatalf("after round 3: %v", a)
	}
	if lr := r.ledgerRounds(); len(lr) != 3 || lr[0] != 1 || lr[1] != 2 || lr[2] != 3 {
		t.Fatalf("ledger rounds %v, want [1 2 3]", lr)
	}
	got := r.srv.received()
	if len(got) != 3 || got[2].Round != 3 {
		t.Fatalf("forwarded %d batches", len(got))
	}
	opener, err := protocol.NewHPKEOpener(attackReport, r.srv.key)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range got {
		bind := protocol.Binding{Run: b.Run, Round: b.Round}
		opened := 0
		for i := 0; i < len(b.Reports); i += r.run.ReportBytes {
			rep := b.Reports[i : i+r.run.ReportBytes]
			_, err := opener.Open(bind, rep)
			switch {
			case err == nil:
				opened++
			case b.Round == 3 && bytes.Equal(rep, first) && errors.Is(err, protocol.ErrOpen):
				// The replay: it opens for round 1 only.
				if _, err := opener.Open(protocol.Binding{Run: b.Run, Round: 1}, rep); err != nil {
					t.Fatalf("the replayed report does not open for its own round: %v", err)
				}
			default:
				t.Fatalf("round %d: report %d: %v", b.Round, i/r.run.ReportBytes, err)
			}
		}
		if want := map[int64]int{1: 4, 2: 4, 3: 3}[b.Round]; opened != want {
			t.Fatalf("round %d: %d reports open at the server, want %d", b.Round, opened, want)
		}
	}
	s := r.sh.Stats()
	if s.Discarded != 0 || s.Released != 3 || s.Rejected[RejectReplay] != 1 {
		t.Fatalf("stats %+v", s)
	}
	// The durable store holds the last debited round's ids only.
	// Round 1's replayed report (first) was released again in round 3, so
	// its id is stored under round 3: check an id of rounds 1 and 2 other
	// than first's (the batch is shuffled; first may come first in it).
	fh, _ := protocol.ParseHeader(first)
	for _, round := range []int64{1, 2, 3} {
		b := got[round-1].Reports
		h, _ := protocol.ParseHeader(b)
		if h.ReportID == fh.ReportID {
			h, _ = protocol.ParseHeader(b[r.run.ReportBytes:])
		}
		replays, err := r.store.ClaimReportIDs(ctx, r.run.Run, 9, [][16]byte{h.ReportID})
		if err != nil || (round == 3) != (len(replays) == 1) {
			t.Fatalf("round %d's first id claimed for round 9: replays %x, %v", round, replays, err)
		}
	}
}

// TestWrongKeyReports: reports sealed to a key the server publishes but
// not the round's (key 2 while the round names key 1: a key id that would
// partition the batch), to a key id nobody publishes, and to an
// attacker's own key under the round's key id. The shuffler refuses the
// first two by key id and counts them (wrong_key, unknown_key); the third
// it cannot tell apart (it never opens a report), but the server's
// CheckBatch refuses a batch that mixes key ids, and the third does not
// open with the server's key.
func TestWrongKeyReports(t *testing.T) {
	r := newAttackRig(t, rigOptions{n: 10, k: 4, rounds: 1, secondKey: true})
	ctx := context.Background()
	w := r.work(ctx)
	a := recv(t, w)
	reps, _ := r.honest(a)
	c := a.Clients[0]
	s2, err := protocol.NewHPKESealer(r.key2.Config, attackReport)
	if err != nil {
		t.Fatal(err)
	}
	b := protocol.Binding{Run: r.run.Run, Round: a.Round}
	toKey2, err := s2.Seal(b, make([]byte, attackReport))
	if err != nil {
		t.Fatal(err)
	}
	evil, err := protocol.GenerateKey(9)
	if err != nil {
		t.Fatal(err)
	}
	s9, _ := protocol.NewHPKESealer(evil.Config, attackReport)
	toKey9, err := s9.Seal(b, make([]byte, attackReport))
	if err != nil {
		t.Fatal(err)
	}
	evil.Config.ID = 1 // the attacker's key, published under the round's id
	s1, _ := protocol.NewHPKESealer(evil.Config, attackReport)
	impostor, err := s1.Seal(b, make([]byte, attackReport))
	if err != nil {
		t.Fatal(err)
	}
	tok := r.enr.Token(c)
	ack := r.submit(ctx, a.Round, []*pb.Report{{Client: c, Token: tok, Sealed: toKey2}, {Client: c, Token: tok, Sealed: toKey9}})
	if ack.Accepted != 0 || ack.Rejected[string(RejectWrongKey)] != 1 || ack.Rejected[string(RejectUnknownKey)] != 1 {
		t.Fatalf("reports to key 2 and key 9: %v; want wrong_key 1, unknown_key 1", ack)
	}
	if s := r.sh.Stats(); s.Rejected[RejectWrongKey] != 1 || s.Rejected[RejectUnknownKey] != 1 {
		t.Fatalf("stats %+v", s)
	}
	// The server's side: a batch mixing keys 1 and 2 is refused; a report
	// sealed to the attacker's key under id 1 passes the header checks and
	// fails to open.
	mixed := &pb.Batch{Run: r.run.Run, Round: a.Round, ReportBytes: int64(r.run.ReportBytes),
		Reports: append(append(append(append([]byte(nil), reps[0].Sealed...), reps[1].Sealed...), reps[2].Sealed...), toKey2...)}
	if _, err := CheckBatch(r.run, map[uint8]bool{1: true, 2: true}, mixed); err == nil {
		t.Fatal("CheckBatch accepted a batch mixing key ids 1 and 2")
	}
	op, err := protocol.NewHPKEOpener(attackReport, r.srv.key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := op.Open(b, impostor); err == nil {
		t.Fatal("a report sealed to another key opened with the server's")
	}
	if _, err := op.Open(b, reps[0].Sealed); err != nil {
		t.Fatalf("an honest report does not open: %v", err)
	}
	if ack := r.submit(ctx, a.Round, reps); ack.Accepted != 4 {
		t.Fatalf("honest reports: %v", ack)
	}
	if a := recv(t, w); !a.Finished {
		t.Fatalf("after the round: %v", a)
	}
	for i := range 4 {
		h, _ := protocol.ParseHeader(r.srv.received()[0].Reports[i*r.run.ReportBytes:])
		if h.KeyID != 1 {
			t.Fatalf("forwarded report %d of key %d", i, h.KeyID)
		}
	}
}

// TestBudgetStopBeforeRelease: with the shuffler's target between the
// epsilon of two and of three rounds, the third round is refused when it
// would be opened — before any client is sampled or relayed the model —
// so no report of it is ever computed, sealed or forwarded: the server has
// received exactly the two debited batches (the only reports it can ever
// open) and is told to stop with "target-epsilon".
func TestBudgetStopBeforeRelease(t *testing.T) {
	run := protocol.RunConfig{Randomizer: "rinf", Population: 10, PerRound: 4, Eps0: 2}
	eps := func(rounds int64) float64 {
		g, err := route.Best([]event.Composed{{Event: run.Round(4).Event(), Count: rounds}}, 1e-5, nil)
		if err != nil {
			t.Fatal(err)
		}
		return g.Epsilon
	}
	target := (eps(2) + eps(3)) / 2
	r := newAttackRig(t, rigOptions{n: 10, k: 4, rounds: 100, target: target})
	ctx := context.Background()
	w := r.work(ctx)
	for round := int64(1); round <= 2; round++ {
		a := recv(t, w)
		reps, _ := r.honest(a)
		if ack := r.submit(ctx, a.Round, reps); ack.Accepted != 4 {
			t.Fatalf("round %d: %v", round, ack)
		}
	}
	if a := recv(t, w); !a.Finished {
		t.Fatalf("after the budget was spent: assignment %v, want finished", a)
	}
	select {
	case err := <-r.done:
		r.done <- err // for the cleanup
		if err != nil {
			t.Fatalf("shuffler: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the shuffler did not stop")
	}
	if got := r.srv.received(); len(got) != 2 {
		t.Fatalf("the server received %d batches, want the 2 debited", len(got))
	}
	if lr := r.ledgerRounds(); len(lr) != 2 {
		t.Fatalf("ledger rounds %v", lr)
	}
	r.srv.mu.Lock()
	stops := r.srv.stops
	r.srv.mu.Unlock()
	if len(stops) != 1 || stops[0] != "target-epsilon" {
		t.Fatalf("stops %v, want [target-epsilon]", stops)
	}
	if s := r.sh.Stats(); s.RoundsOpened != 2 || s.Released != 2 || s.Forwarded != 8 {
		t.Fatalf("stats %+v: the refused round was opened", s)
	}
}

// TestForwardedOrderIsUniform: with k = n = 4 clients who report in the
// same order every round (client 0 first), the order in which the reports
// reach the server must be a uniformly random permutation, independent of
// arrival order and of who reported. The stand-in server reads the report
// ids off each batch and the test maps them back to clients, over 720
// rounds, and applies two Pearson chi-square tests:
//
//   - the 24 orders (permutations) of the four clients: under uniformity
//     the statistic is asymptotically chi-square with 23 degrees of freedom
//     (expected count 30 per order);
//   - the 4x4 table of client by position: a sum of R uniform permutation
//     matrices has covariance (1/(k-1)) (I - J/k)⊗(I - J/k) per round, so
//     Pearson's X² with expected R/k per cell is (k/(k-1)) chi-square with
//     (k-1)² = 9 degrees of freedom; the test scales it by (k-1)/k.
//
// The shuffler draws its permutations from crypto/rand (it has no seed), so
// the test is random: each statistic is compared with its chi-square
// quantile at 1 - 1e-6 (70.55 for 23 df, 44.81 for 9 df; computed with
// mpmath, gammainc(df/2, x/2, inf, regularized) = 1e-6), so a correct
// shuffler fails this test with probability about 2e-6 per run. A shuffler
// that forwarded in arrival order scores X² = 23·720 = 16,560 on the first
// and the second, as does one that favoured any order by a few percent
// (the test detects a bias of ~30% in one order's probability, or a
// position bias of ~0.03 in one cell, with near certainty).
func TestForwardedOrderIsUniform(t *testing.T) {
	const k, rounds = 4, 720
	r := newAttackRig(t, rigOptions{n: k, k: k, rounds: rounds})
	ctx := context.Background()
	w := r.work(ctx)
	owner := map[[protocol.ReportIDSize]byte]int64{}
	for round := 1; round <= rounds; round++ {
		a := recv(t, w)
		if len(a.Clients) != k {
			t.Fatalf("round %d: %d clients", round, len(a.Clients))
		}
		var reps []*pb.Report
		for c := range int64(k) { // arrival order: 0, 1, 2, 3
			s := r.seal(a.Round, c)
			h, _ := protocol.ParseHeader(s)
			owner[h.ReportID] = c
			reps = append(reps, &pb.Report{Client: c, Token: r.enr.Token(c), Sealed: s})
		}
		if ack := r.submit(ctx, a.Round, reps); ack.Accepted != k {
			t.Fatalf("round %d: %v", round, ack)
		}
	}
	if a := recv(t, w); !a.Finished {
		t.Fatalf("after %d rounds: %v", rounds, a)
	}
	got := r.srv.received()
	if len(got) != rounds {
		t.Fatalf("%d batches, want %d", len(got), rounds)
	}
	orders := map[[k]int64]float64{}
	var cell [k][k]float64 // client, position
	for _, b := range got {
		var order [k]int64
		for p := range k {
			h, err := protocol.ParseHeader(b.Reports[p*r.run.ReportBytes:])
			if err != nil {
				t.Fatal(err)
			}
			c, ok := owner[h.ReportID]
			if !ok {
				t.Fatalf("round %d: an unknown report id", b.Round)
			}
			order[p] = c
			cell[c][p]++
		}
		orders[order]++
	}
	if len(orders) > 24 {
		t.Fatalf("%d distinct orders of 4 clients", len(orders))
	}
	e := float64(rounds) / 24
	x2orders := 0.0
	for _, o := range orders {
		x2orders += (o - e) * (o - e) / e
	}
	x2orders += float64(24-len(orders)) * e // orders never seen
	e = float64(rounds) / k
	x2cells := 0.0
	for c := range k {
		for p := range k {
			x2cells += (cell[c][p] - e) * (cell[c][p] - e) / e
		}
	}
	x2cells *= float64(k-1) / k
	t.Logf("chi-square: orders %.2f (23 df), client by position %.2f (9 df, scaled)", x2orders, x2cells)
	if x2orders > 70.55 {
		t.Errorf("orders: chi-square %.2f > 70.55 (23 df, p < 1e-6): the forwarded order is not uniform; counts %v", x2orders, orders)
	}
	if x2cells > 44.81 {
		t.Errorf("client by position: chi-square %.2f > 44.81 (9 df, p < 1e-6): counts %v", x2cells, cell)
	}
}

// TestBatchOnTheWire inspects each batch exactly as the server receives it
// (the protobuf message and the call's metadata at the stand-in server's
// listener): the message type has just the fields run, round,
// report_bytes, reports and model_version (the version of the model the
// round relayed, checked; a field added later, such as a timestamp or a
// client list, fails this test), no unknown fields arrive, the reports are
// the sealed bytes the clients sent, unchanged, each of the run's one
// length, all to the round's key, and the metadata holds only gRPC's own
// headers (no identity, no time). The ledger's digest of each round is the
// SHA-256 of the batch the server received.
func TestBatchOnTheWire(t *testing.T) {
	r := newAttackRig(t, rigOptions{n: 10, k: 4, rounds: 2})
	ctx := context.Background()
	w := r.work(ctx)
	sent, versions := map[int64]map[string]bool{}, map[int64]int64{}
	for round := 1; round <= 2; round++ {
		a := recv(t, w)
		reps, _ := r.honest(a)
		sent[a.Round], versions[a.Round] = map[string]bool{}, a.Model.GetVersion()
		for _, rep := range reps {
			if len(rep.Sealed) != r.run.ReportBytes {
				t.Fatalf("a client's sealed report has %d bytes, the run's %d", len(rep.Sealed), r.run.ReportBytes)
			}
			sent[a.Round][string(rep.Sealed)] = true
		}
		if ack := r.submit(ctx, a.Round, reps); ack.Accepted != 4 {
			t.Fatalf("round %d: %v", round, ack)
		}
	}
	if a := recv(t, w); !a.Finished {
		t.Fatalf("%v", a)
	}
	fields := (&pb.Batch{}).ProtoReflect().Descriptor().Fields()
	var names []string
	for i := range fields.Len() {
		names = append(names, string(fields.Get(i).Name()))
	}
	if want := []string{"run", "round", "report_bytes", "reports", "model_version"}; !slices.Equal(names, want) {
		t.Fatalf("Batch has fields %v, want exactly %v: a batch carries no identity, time or order (the model version is the server's own)", names, want)
	}
	entries, err := r.store.Entries(ctx, r.run.Run)
	if err != nil {
		t.Fatal(err)
	}
	got := r.srv.received()
	if len(got) != 2 || len(entries) != 2 {
		t.Fatalf("%d batches, %d ledger entries", len(got), len(entries))
	}
	allowedMD := map[string]bool{":authority": true, "content-type": true, "user-agent": true, "grpc-accept-encoding": true}
	for i, b := range got {
		if u := b.ProtoReflect().GetUnknown(); len(u) != 0 {
			t.Fatalf("batch %d carries %d bytes of unknown fields", i, len(u))
		}
		b.ProtoReflect().Range(func(f protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch f.Name() {
			case "run", "round", "report_bytes", "reports", "model_version":
			default:
				t.Errorf("batch %d sets field %s", i, f.Name())
			}
			return true
		})
		if b.ModelVersion != versions[b.Round] {
			t.Fatalf("batch %d (round %d): model version %d, the round relayed version %d", i, b.Round, b.ModelVersion, versions[b.Round])
		}
		if b.Run != r.run.Run || b.ReportBytes != int64(r.run.ReportBytes) || len(b.Reports) != 4*r.run.ReportBytes {
			t.Fatalf("batch %d: run %q, report_bytes %d, %d bytes of reports", i, b.Run, b.ReportBytes, len(b.Reports))
		}
		pbatch, err := CheckBatch(r.run, map[uint8]bool{1: true}, b)
		if err != nil {
			t.Fatalf("batch %d: %v", i, err)
		}
		seen := map[string]bool{}
		for j, rep := range pbatch.Reports {
			if !sent[b.Round][string(rep)] || seen[string(rep)] {
				t.Fatalf("batch %d report %d is not one of round %d's sealed reports, byte for byte", i, j, b.Round)
			}
			seen[string(rep)] = true
		}
		if entries[i].Round != b.Round || entries[i].Digest != ledger.Digest(pbatch.Digest()) || entries[i].Reports != 4 {
			t.Fatalf("batch %d (round %d): ledger entry %+v does not match", i, b.Round, entries[i])
		}
		r.srv.mu.Lock()
		md := r.srv.metadata[i]
		r.srv.mu.Unlock()
		if len(md) == 0 {
			t.Fatalf("batch %d: no metadata recorded (the check would be vacuous)", i)
		}
		for k := range md {
			if !allowedMD[k] {
				t.Errorf("batch %d: metadata %s = %q", i, k, md[k])
			}
		}
	}
}
