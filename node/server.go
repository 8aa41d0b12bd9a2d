package node

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/shuffledp/shuffledp/dashboard"
	"github.com/shuffledp/shuffledp/data"
	"github.com/shuffledp/shuffledp/ledger"
	"github.com/shuffledp/shuffledp/pki"
	pb "github.com/shuffledp/shuffledp/proto/shuffledp/v1"
	"github.com/shuffledp/shuffledp/protocol"
	"github.com/shuffledp/shuffledp/shard"
	"github.com/shuffledp/shuffledp/telemetry"
)

// KeyFile is the server's HPKE key pair inside its state directory
// (protocol.ReceiverKey.MarshalBinary, mode 0600).
const KeyFile = "hpke.key"

// closeGrace bounds Close's wait for calls in flight.
const closeGrace = 2 * time.Second

// DefaultBatchTimeout bounds the server's wait for the shuffler's next
// batch after it published a model: above the shuffler's wait for its
// clients before the first round (DefaultRegisterTimeout), a round's
// deadline (DefaultRoundTimeout) and a shuffler restart.
const DefaultBatchTimeout = 30 * time.Minute

// ErrBatchTimeout is returned (wrapped) by Next when no batch arrived
// within ServerConfig.BatchTimeout.
var ErrBatchTimeout = errors.New("no batch from the shuffler in time")

// serverKeyID is the id of the key config a fresh server generates.
const serverKeyID = 1

// Dataset names the clients' data in a run's public specification.
type Dataset struct {
	// Name is mnist or synthetic.
	Name string
	// Seed generates the synthetic data set (data.Synthetic) and seeds
	// the partition.
	Seed uint64
	// ExamplesPerClient is M (0 or 1: one example a client) and Partition
	// how the first clients*M examples are dealt to the clients
	// (data.ParsePartition; "" is index: client i holds examples
	// iM..iM+M-1).
	ExamplesPerClient int
	Partition         string
}

// Validate refuses a data set the clients cannot load.
func (d Dataset) Validate() error {
	if d.Name != "mnist" && d.Name != "synthetic" {
		return fmt.Errorf("dataset must be mnist or synthetic, got %q", d.Name)
	}
	if d.ExamplesPerClient < 0 {
		return fmt.Errorf("examples-per-client must be >= 1, got %d", d.ExamplesPerClient)
	}
	_, err := data.ParsePartition(d.Partition)
	return err
}

// ServerConfig configures a Server.
type ServerConfig struct {
	// Dir is the server's state directory, opened and locked by the
	// caller (the training session whose loop the node serves); the
	// node keeps its HPKE key pair there (KeyFile).
	Dir string
	// Dataset is published for the clients (the server holds only the
	// test set).
	Dataset Dataset
	// Delta and TargetEpsilon are the server's accounting parameters,
	// published in the RunSpec (the shuffler refuses another delta and
	// honours a lower target).
	Delta, TargetEpsilon float64
	// Rounds is the number of rounds the run plans (the loop's
	// ceil(epochs*n/k)), published in the RunSpec: the shuffler's ledger
	// debits at most this many (0: none published, no cap).
	Rounds int64
	// Bound is the run's bound (training.Config.Bound: "best" or
	// "best-conjecture"), published to the shuffler, which refuses another.
	Bound string
	// TLS is the listener's configuration (pki.ServerTLS with the server's
	// certificate).
	TLS *tls.Config
	// Metrics receives the server's Prometheus metrics (nil: none).
	Metrics *telemetry.ServerMetrics
	// Dashboard hears the batches the server refuses (nil: none); the
	// server's loop feeds it the rest (dashboard.ServerBoard).
	Dashboard *dashboard.ServerBoard
	// MaxConns bounds the listener's open connections (0:
	// DefaultMaxConns); FirstMessage the wait for a call's request once
	// its headers arrived (0: DefaultFirstMessage; a batch is given a
	// second more per MiB of the largest, minRecvRate).
	MaxConns     int
	FirstMessage time.Duration
	// BatchTimeout bounds Next's wait for the shuffler's batch after the
	// model was published (0: DefaultBatchTimeout); past it Next fails
	// with ErrBatchTimeout, naming the model version and the flag.
	BatchTimeout time.Duration
	// Shards, if > 1, is the number of shuffler shards serving the run
	// (docs/shards.md): the clients are split by shard.Split, each shard's
	// shuffler asks for the model and submits its batch under its shard's
	// run id (shard.RunID), and a round is the shards' batches together,
	// one per shard (shard.Collector). The shards must be equal (n and k
	// divisible by Shards), so that every shard's round is one event, the
	// one the server's ledger records for the round.
	Shards int
	// Received is the server's record of the batches it received (the
	// loop's ledger, training.Trainer.Ledger; nil: none, every checked
	// batch is handed over). With it, Next refuses a batch that
	// contradicts the record — a round recorded with other reports, or a
	// round below the last recorded one (a second shuffler, or one whose
	// ledger was lost) — and the loop, which would stop on recording it
	// (ledger.ErrConflict), never sees it; and every model published
	// tells the shuffler the last round received (pb.Model.last_round),
	// which a shuffler whose ledger is behind refuses. Unsharded runs only.
	Received Received
	// Log receives one line per round with the round's phases as the
	// server sees them (nil: none): the wait for the batch (clients and
	// shuffler), its application (the ledger record, opening, decoding,
	// the step) and what follows until the next model is published
	// (evaluation, checkpoint, metrics).
	Log *log.Logger
}

// Received is the record of the batches a server received: its ledger
// (ledger.Ledger).
type Received interface {
	// LastRound returns the highest round recorded, or -1.
	LastRound() int64
	// Entry returns round's entry, if it was recorded.
	Entry(round int64) (ledger.Entry, bool)
}

// ErrConflictingBatch is returned (wrapped) to the shuffler whose batch
// Next refused because it contradicts the server's record of the rounds
// it received.
var ErrConflictingBatch = errors.New("the batch contradicts the server's record of the rounds received")

// ErrStopped is returned by Next when the node is stopped (Interrupt, Close)
// while the loop waits for a batch: the run was interrupted, not finished.
var ErrStopped = errors.New("server node stopped")

// Server is the server role's network transport: the gRPC service the
// shuffler and the clients call, and the HPKE key pair reports are sealed
// to. It does not train: the server process runs the training loop
// (package training, a Trainer built WithRemote over this Server) and the
// loop asks Next for every round's batch.
//
// Next and SubmitBatch meet in one handoff, the only place where the two
// directions of the wire cross: the shuffler dials the server (nodes dial
// out), so a released batch arrives as a call to SubmitBatch, while the
// loop is waiting in Next. Next publishes the model (GetModel's long poll
// returns it to the shuffler) and waits; SubmitBatch checks the batch and
// hands it over an unbuffered channel, returning to the shuffler once the
// loop has taken it. The one thing that flows back from the loop to the
// handler is Next's answer to the handoff: a batch that contradicts the
// server's record of rounds received is refused there, where batches are
// taken one at a time (a check in the handlers would let two concurrent
// batches of one round both pass), and the loop waits on.
type Server struct {
	pb.UnimplementedServerServer
	cfg    ServerConfig
	key    protocol.ReceiverKey
	opener *protocol.HPKEOpener
	spec   *pb.RunSpec
	run    protocol.RunConfig
	grpc   *grpc.Server

	mu      sync.Mutex
	changed chan struct{} // closed and replaced when model or finished changes
	// model is the published model whose batch the loop waits for; nil
	// before the first and, in an unsharded run, from when its batch was
	// taken until the next is published (GetModel hands out no model
	// whose batch was applied already). pub is its handoff.
	model    *pb.Model
	pub      *publication
	finished bool
	// modelRound is the collector's round the published model is for
	// (sharded runs only).
	modelRound int64

	taken time.Time // when the batch being applied was handed over
	// published and applied time the round's phases (ServerConfig.Log):
	// when the model was last published, when its batch was applied.
	published, applied time.Time
	round              int64 // the round of the batch being applied
	// openRefused counts the reports that did not open (countingOpener),
	// so that RoundApplied can count those that opened but did not
	// decode (server.Step.Refused holds both).
	openRefused, openRefusedSeen atomic.Int64

	// Sharded runs (ServerConfig.Shards > 1): the shards' plan, the
	// collector of their batches, the round each shard was handed a model
	// for, and the binding of every report of the round being applied
	// (its shard's run id and round), which the opener reads.
	plan     *shard.Plan
	coll     *shard.Collector
	served   []int64
	bindings atomic.Pointer[map[[protocol.ReportIDSize]byte]protocol.Binding]

	stops    chan string
	stopping chan struct{}
	stopOnce sync.Once
}

// NewServer opens (generating it on first start) the server's HPKE key
// pair in cfg.Dir. The run's configuration comes next, with Publish.
func NewServer(cfg ServerConfig) (*Server, error) {
	if cfg.TLS == nil {
		return nil, errors.New("server: a TLS configuration is required")
	}
	if err := checkListenerTLS("server", cfg.TLS); err != nil {
		return nil, err
	}
	if err := cfg.Dataset.Validate(); err != nil {
		return nil, err
	}
	if err := CheckOwnCertificates("server", cfg.TLS, time.Now()); err != nil {
		return nil, err
	}
	switch {
	case cfg.BatchTimeout < 0:
		return nil, fmt.Errorf("batch-timeout must be >= 0, got %v", cfg.BatchTimeout)
	case cfg.FirstMessage < 0:
		return nil, fmt.Errorf("first-message wait must be >= 0, got %v", cfg.FirstMessage)
	case cfg.BatchTimeout == 0:
		cfg.BatchTimeout = DefaultBatchTimeout
	}
	s := &Server{cfg: cfg, changed: make(chan struct{}),
		stops: make(chan string, 1), stopping: make(chan struct{})}
	cfg.Metrics.Budget(cfg.TargetEpsilon, cfg.Delta)
	var err error
	if s.key, err = loadOrCreateKey(filepath.Join(cfg.Dir, KeyFile)); err != nil {
		return nil, err
	}
	return s, nil
}

// loadOrCreateKey reads the server's key pair, or generates and writes one.
func loadOrCreateKey(path string) (protocol.ReceiverKey, error) {
	var k protocol.ReceiverKey
	if _, err := os.Stat(path); err == nil {
		if err := pki.CheckPrivate(path); err != nil {
			return k, fmt.Errorf("server key: %w", err)
		}
	}
	b, err := os.ReadFile(path)
	if err == nil {
		if err := k.UnmarshalBinary(b); err != nil {
			return k, fmt.Errorf("server key %s: %w", path, err)
		}
		return k, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return k, fmt.Errorf("server key: %w", err)
	}
	if k, err = protocol.GenerateKey(serverKeyID); err != nil {
		return k, err
	}
	if b, err = k.MarshalBinary(); err != nil {
		return k, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return k, fmt.Errorf("server key: %w", err)
	}
	_, err = f.Write(b)
	if serr := f.Sync(); err == nil {
		err = serr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return k, fmt.Errorf("server key: %w", err)
	}
	return k, nil
}

// Sealing returns the HPKE sealing of the run's reports of reportSize
// bytes (the randomizer's report size): the sealer, whose overhead fixes
// the run's report length, and the opener the server's loop opens reports
// with (counting those that do not open, with metrics).
func (s *Server) Sealing(reportSize int) (protocol.Sealer, protocol.Opener, error) {
	sealer, err := protocol.NewHPKESealer(s.key.Config, reportSize)
	if err != nil {
		return nil, nil, err
	}
	if s.opener, err = protocol.NewHPKEOpener(reportSize, s.key); err != nil {
		return nil, nil, err
	}
	var op protocol.Opener = s.opener
	if s.cfg.Shards > 1 {
		op = shardOpener{op, s}
	}
	if s.cfg.Metrics != nil {
		return sealer, countingOpener{op, s.cfg.Metrics, &s.openRefused}, nil
	}
	return sealer, op, nil
}

// Publish sets the run's public configuration (the loop's
// protocol.RunConfig, its report length the sealed one), which GetRun
// publishes with the key configs and against which batches are checked.
// Serve needs it first.
func (s *Server) Publish(run protocol.RunConfig) error {
	kc, err := s.key.Config.MarshalBinary()
	if err != nil {
		return err
	}
	s.run = run
	if s.cfg.Shards > 1 {
		if err := s.shardRun(run); err != nil {
			return err
		}
	}
	s.spec = &pb.RunSpec{Config: runConfigToPB(run), KeyConfigs: [][]byte{kc},
		Delta: s.cfg.Delta, TargetEpsilon: s.cfg.TargetEpsilon, Rounds: s.cfg.Rounds, Bound: s.cfg.Bound,
		Dataset: &pb.Dataset{Name: s.cfg.Dataset.Name, Seed: s.cfg.Dataset.Seed, ExamplesPerClient: int64(s.cfg.Dataset.ExamplesPerClient),
			Partition: s.cfg.Dataset.Partition}}
	return nil
}

// Serve serves the gRPC service on lis until Close. It needs Publish first.
func (s *Server) Serve(lis net.Listener) error {
	if s.spec == nil {
		return errors.New("server: Serve before Publish")
	}
	s.mu.Lock()
	if s.grpc == nil {
		s.grpc = grpc.NewServer(serverOptions(s.cfg.TLS, serverLimits{recv: batchLimit(s.run), firstMessage: s.cfg.FirstMessage})...)
		pb.RegisterServerServer(s.grpc, s)
	}
	g := s.grpc
	s.mu.Unlock()
	return g.Serve(newLimitListener(lis, s.cfg.MaxConns))
}

// RoundApplied records a round the loop applied in the metrics: its
// reports, and those refused (server.Step.Refused: the ones that did not
// open are counted already, as they failed; the rest did not decode).
func (s *Server) RoundApplied(reports, refused int) {
	s.mu.Lock()
	s.applied = time.Now()
	taken := s.taken
	s.mu.Unlock()
	m := s.cfg.Metrics
	if m == nil {
		return
	}
	m.RoundAggregated(reports, time.Since(taken))
	seen := s.openRefused.Load()
	for range int64(refused) - (seen - s.openRefusedSeen.Swap(seen)) {
		m.ReportRejected(telemetry.ReasonMalformed)
	}
}

// Evaluated records an evaluation's test accuracies (raw and of the
// averaged parameters; nil: not measured) in the metrics.
func (s *Server) Evaluated(raw, ema *float64) {
	m := s.cfg.Metrics
	if m == nil {
		return
	}
	if raw != nil {
		m.Accuracy("raw", *raw)
	}
	if ema != nil {
		m.Accuracy("ema", *ema)
	}
}

// Spent records the epsilon of the server's ledger at an evaluation (nil:
// none, a run without a randomizer) in the metrics.
func (s *Server) Spent(epsilon *float64) {
	if s.cfg.Metrics != nil && epsilon != nil {
		s.cfg.Metrics.Epsilon(*epsilon)
	}
}

// Finish tells the shuffler the run is over: GetModel answers finished.
func (s *Server) Finish() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.finished {
		return
	}
	s.finished = true
	close(s.changed)
	s.changed = make(chan struct{})
	if s.coll != nil {
		s.coll.Finish()
	}
}

// Interrupt stops a Next waiting for a batch (it returns ErrStopped) and
// refuses further batches; the process stops its loop on a signal with it.
func (s *Server) Interrupt() { s.stopOnce.Do(func() { close(s.stopping) }) }

// Close stops serving, letting a pending long poll hear "finished".
func (s *Server) Close() error {
	s.Interrupt()
	s.mu.Lock()
	g := s.grpc
	s.mu.Unlock()
	if g != nil { // let the shuffler's pending long poll hear "finished"
		done := make(chan struct{})
		go func() { g.GracefulStop(); close(done) }()
		select {
		case <-done:
		case <-time.After(closeGrace):
			g.Stop()
		}
	}
	return nil
}

// Next is the loop's side of the handoff (training.BatchSource): it
// publishes m for the shuffler's GetModel and waits for the batch the
// shuffler releases next (SubmitBatch), at most BatchTimeout. It returns
// an error wrapping ledger.ErrBudgetExhausted when the shuffler stopped
// the run (its budget is spent), ErrStopped when the node was stopped, and
// one wrapping ErrBatchTimeout when no batch came in time. A batch that
// contradicts the record of rounds received (ServerConfig.Received) is
// refused to its shuffler, counted and shown, and Next waits on.
func (s *Server) Next(ctx context.Context, m protocol.Model) (protocol.Batch, error) {
	pm := &pb.Model{Run: m.Run, Version: m.Version, Params: append([]float64(nil), m.Params...), KeyId: uint32(s.key.Config.ID)}
	if s.coll != nil {
		return s.nextSharded(ctx, pm)
	}
	if s.cfg.Received != nil {
		pm.LastRound = max(s.cfg.Received.LastRound(), 0)
	}
	pub := &publication{version: m.Version, batches: make(chan handoff), gone: make(chan struct{})}
	defer close(pub.gone)
	s.mu.Lock()
	s.model, s.pub = pm, pub
	close(s.changed)
	s.changed = make(chan struct{})
	now := time.Now()
	if s.cfg.Log != nil && !s.published.IsZero() && s.applied.After(s.taken) {
		s.cfg.Log.Printf("round %d phases: %.3fs waiting for the batch (clients, shuffler), %.3fs applying it (ledger record, open, decode, step), %.3fs to the next model (evaluation, checkpoint, metrics)",
			s.round, s.taken.Sub(s.published).Seconds(), s.applied.Sub(s.taken).Seconds(), now.Sub(s.applied).Seconds())
	}
	s.published = now
	s.mu.Unlock()
	timer := time.NewTimer(s.cfg.BatchTimeout)
	defer timer.Stop()
	for {
		h, err := s.await(ctx, timer, pub)
		if err != nil {
			return protocol.Batch{}, err
		}
		if err := s.admit(h.batch); err != nil {
			h.reply <- err
			continue
		}
		h.reply <- nil
		s.mu.Lock()
		s.taken, s.round = time.Now(), h.batch.Round
		s.model, s.pub = nil, nil // applied: GetModel waits for the next
		s.mu.Unlock()
		return h.batch, nil
	}
}

// handoff is a checked batch offered to the loop by SubmitBatch, and the
// channel (buffered) on which Next answers: nil, taken; or why refused.
type handoff struct {
	batch protocol.Batch
	reply chan error
}

// admit checks a batch against the record of rounds received
// (ServerConfig.Received), which holds every batch the loop took: the
// loop records each before it asks Next for the next one. A batch of a
// recorded round is admitted only if it is the recorded batch (the same
// number of reports and digest: a shuffler forwarding it again after a
// restart, which the loop's record takes idempotently); one below the
// last recorded round is refused. A refusal is counted
// (telemetry.ReasonConflict), shown on the dashboard and logged.
func (s *Server) admit(b protocol.Batch) error {
	if s.cfg.Received == nil {
		return nil
	}
	var err error
	if e, ok := s.cfg.Received.Entry(b.Round); ok {
		if e.Reports == len(b.Reports) && e.Digest == ledger.Digest(b.Digest()) {
			return nil
		}
		err = fmt.Errorf("%w: round %d of run %q was received before with %d reports (digest %x), this batch has %d: a second shuffler serving the run, or one whose ledger was lost or replaced",
			ErrConflictingBatch, b.Round, b.Run, e.Reports, e.Digest[:8], len(b.Reports))
	} else if last := s.cfg.Received.LastRound(); b.Round < last {
		err = fmt.Errorf("%w: round %d of run %q is below round %d, the last received: a second shuffler serving the run, or one whose ledger was lost or replaced",
			ErrConflictingBatch, b.Round, b.Run, last)
	} else {
		return nil
	}
	s.cfg.Metrics.BatchRejected(telemetry.ReasonConflict)
	s.cfg.Dashboard.Error("batch refused: " + err.Error())
	if s.cfg.Log != nil {
		s.cfg.Log.Printf("batch refused (the run goes on): %v", err)
	}
	return err
}

// await is one wait of Next for a handoff of the batch of pub's model.
func (s *Server) await(ctx context.Context, timer *time.Timer, pub *publication) (handoff, error) {
	select {
	case <-timer.C:
		return handoff{}, fmt.Errorf("%w: no batch within %v of publishing model version %d (--batch-timeout); is the shuffler running, connected to this server, with its --min-connected clients registered?",
			ErrBatchTimeout, s.cfg.BatchTimeout, pub.version)
	case h := <-pub.batches:
		return h, nil
	case reason := <-s.stops:
		return handoff{}, stopError(reason)
	case <-s.stopping:
		return handoff{}, ErrStopped
	case <-ctx.Done():
		return handoff{}, ctx.Err()
	}
}

// publication is the handoff of one published model's batch (Next): a
// batch is handed over only on the channel of the model version it was
// computed on, and gone is closed when Next stops waiting for it, so that
// no batch is ever applied to another version than its own (a server
// restarted from an older checkpoint, a second batch for a model whose
// batch was taken).
type publication struct {
	version int64
	batches chan handoff
	gone    chan struct{}
}

// stopError is Next's error when the shuffler stopped the run for reason:
// it wraps ledger.ErrBudgetExhausted (no more rounds will come) and, for
// protocol.StopRounds, protocol.ErrRoundsDebited.
func stopError(reason string) error {
	if reason == protocol.StopRounds {
		return fmt.Errorf("the shuffler stopped the run (%s: %w): %w", reason, protocol.ErrRoundsDebited, ledger.ErrBudgetExhausted)
	}
	return fmt.Errorf("the shuffler stopped the run (%s): %w", reason, ledger.ErrBudgetExhausted)
}

// GetRun implements the Server service: the public run specification.
func (s *Server) GetRun(context.Context, *pb.GetRunRequest) (*pb.RunSpec, error) {
	return s.spec, nil
}

// GetModel implements the Server service (shuffler only: rpcRoles).
func (s *Server) GetModel(ctx context.Context, req *pb.GetModelRequest) (*pb.Model, error) {
	if s.coll != nil {
		return s.getShardModel(ctx, req)
	}
	if req.Run != s.run.Run {
		return nil, status.Errorf(codes.NotFound, "run %q, the server's is %q", req.Run, s.run.Run)
	}
	for {
		s.mu.Lock()
		m, fin, ch := s.model, s.finished, s.changed
		s.mu.Unlock()
		if fin {
			return &pb.Model{Run: s.run.Run, Finished: true}, nil
		}
		if m != nil && m.Version > req.AfterVersion {
			return m, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, status.FromContextError(ctx.Err()).Err()
		case <-s.stopping:
			return nil, status.Error(codes.Unavailable, "server stopping")
		}
	}
}

// SubmitBatch implements the Server service (shuffler only: rpcRoles; the
// message is bounded by batchLimit before it is read): the batch is
// checked (run, report length, batch size, distinct report ids, one key id
// the server holds) and handed to the training loop waiting in Next, if
// the loop waits for the batch of the model version it was computed on,
// and admitted there (Server.admit: a batch contradicting the record of
// rounds received is refused with FailedPrecondition). A batch of another
// version (computed on a model of the server before it restarted from an
// older checkpoint, or a second batch of a model whose batch was taken)
// is refused with Aborted: the shuffler debited it, and counts it
// released and unused.
func (s *Server) SubmitBatch(ctx context.Context, pbb *pb.Batch) (*pb.BatchAck, error) {
	if s.coll != nil {
		return s.submitShardBatch(pbb)
	}
	b, err := s.checkBatch(pbb)
	if err != nil {
		s.cfg.Metrics.BatchRejected(batchReason(err))
		s.cfg.Dashboard.Error("batch refused: " + err.Error())
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	pub, err := s.publication(ctx)
	if err != nil {
		return nil, err
	}
	if pub == nil || pub.version != b.ModelVersion {
		if err := s.admit(b); err != nil { // a conflict is one, whatever its version
			return nil, status.Error(codes.FailedPrecondition, err.Error())
		}
		return nil, s.staleBatch(b, pub)
	}
	h := handoff{batch: b, reply: make(chan error, 1)}
	select {
	case pub.batches <- h: // the loop took it (the one handoff: see Server)
		if err := <-h.reply; err != nil {
			return nil, status.Error(codes.FailedPrecondition, err.Error())
		}
		return &pb.BatchAck{}, nil
	case <-pub.gone: // the loop took another batch of this version, or stopped waiting
		return nil, s.staleBatch(b, nil)
	case <-s.stopping:
		return nil, status.Error(codes.Unavailable, "server stopping")
	case <-ctx.Done():
		return nil, status.FromContextError(ctx.Err()).Err()
	}
}

// publication waits until the loop publishes a model whose batch it waits
// for (not while it applies the last batch, nor before its first model,
// as a restarted server loads its checkpoint) and returns its
// publication; nil once the run is finished.
func (s *Server) publication(ctx context.Context) (*publication, error) {
	for {
		s.mu.Lock()
		pub, fin, ch := s.pub, s.finished, s.changed
		s.mu.Unlock()
		if pub != nil || fin {
			return pub, nil
		}
		select {
		case <-ch:
		case <-s.stopping:
			return nil, status.Error(codes.Unavailable, "server stopping")
		case <-ctx.Done():
			return nil, status.FromContextError(ctx.Err()).Err()
		}
	}
}

// staleBatch refuses batch b, computed on a model version the loop does
// not wait for (pub: the publication it waits on, nil if none: the run is
// finished, or the loop took another batch of that version).
func (s *Server) staleBatch(b protocol.Batch, pub *publication) error {
	s.cfg.Metrics.BatchRejected(telemetry.ReasonWrongRound)
	msg := fmt.Sprintf("batch of round %d computed on model version %d: the server waits for no batch of that version (", b.Round, b.ModelVersion)
	if pub != nil {
		msg += fmt.Sprintf("it published model version %d)", pub.version)
	} else {
		msg += "its batch was taken, or the run is finished)"
	}
	s.cfg.Dashboard.Error("batch refused: " + msg)
	if s.cfg.Log != nil {
		s.cfg.Log.Printf("%s; refused", msg)
	}
	return status.Error(codes.Aborted, msg)
}

// checkBatch validates a batch and splits its reports.
func (s *Server) checkBatch(p *pb.Batch) (protocol.Batch, error) {
	return CheckBatch(s.run, map[uint8]bool{s.key.Config.ID: true}, p)
}

// CheckBatch validates a batch as the server receives it: the run's, of
// reports of the run's length, at least the minimum batch and at most k of
// them (under participation checkin, at most the population: the batch
// size is random), no report id twice, all sealed to one key id among keys. It returns
// the batch with its reports split (sub-slices of p.Reports).
func CheckBatch(run protocol.RunConfig, keys map[uint8]bool, p *pb.Batch) (protocol.Batch, error) {
	size := run.ReportBytes
	switch {
	case p.Run != run.Run:
		return protocol.Batch{}, batchErr(telemetry.ReasonWrongRound, fmt.Errorf("batch of run %q, server of run %q", p.Run, run.Run))
	case p.ReportBytes != int64(size) || len(p.Reports)%size != 0:
		return protocol.Batch{}, batchErr(telemetry.ReasonWrongLength, fmt.Errorf("batch of %d bytes in reports of %d, the run's reports have %d", len(p.Reports), p.ReportBytes, size))
	case p.Round < 1:
		return protocol.Batch{}, batchErr(telemetry.ReasonWrongRound, fmt.Errorf("batch round %d", p.Round))
	}
	n, most := len(p.Reports)/size, run.PerRound
	if run.Participation == protocol.ParticipationCheckIn {
		most = run.Population
	}
	if n < run.MinBatch || n > most {
		return protocol.Batch{}, fmt.Errorf("batch of %d reports, the run's batches have %d to %d", n, run.MinBatch, most)
	}
	b := protocol.Batch{Run: p.Run, Round: p.Round, ModelVersion: p.ModelVersion, Reports: make([][]byte, n)}
	seen := make(map[[protocol.ReportIDSize]byte]struct{}, n)
	var key uint8
	for i := range n {
		r := p.Reports[i*size : (i+1)*size : (i+1)*size]
		h, err := protocol.ParseHeader(r)
		if err != nil {
			return protocol.Batch{}, batchErr(telemetry.ReasonMalformed, fmt.Errorf("report %d: %w", i, err))
		}
		if i == 0 {
			key = h.KeyID
		}
		switch {
		case !keys[h.KeyID]:
			return protocol.Batch{}, batchErr(telemetry.ReasonUnknownKey, fmt.Errorf("report %d: %w %d", i, protocol.ErrUnknownKey, h.KeyID))
		case h.KeyID != key:
			return protocol.Batch{}, batchErr(telemetry.ReasonWrongKey, fmt.Errorf("report %d: key id %d in a batch sealed to key %d (mixed key ids)", i, h.KeyID, key))
		}
		if _, dup := seen[h.ReportID]; dup {
			return protocol.Batch{}, batchErr(telemetry.ReasonDuplicate, fmt.Errorf("report %d: report id %x twice in the batch", i, h.ReportID))
		}
		seen[h.ReportID] = struct{}{}
		b.Reports[i] = r
	}
	return b, nil
}

// batchError is a CheckBatch refusal with its metrics label.
type batchError struct {
	reason telemetry.Reason
	err    error
}

func batchErr(r telemetry.Reason, err error) error { return &batchError{r, err} }
func (e *batchError) Error() string                { return e.err.Error() }
func (e *batchError) Unwrap() error                { return e.err }

// batchReason is the metrics label of a CheckBatch error (a batch size
// outside [min batch, k] is "other").
func batchReason(err error) telemetry.Reason {
	var be *batchError
	if errors.As(err, &be) {
		return be.reason
	}
	return telemetry.ReasonOther
}

// countingOpener counts the reports that do not open (server metrics).
type countingOpener struct {
	op protocol.Opener
	m  *telemetry.ServerMetrics
	n  *atomic.Int64
}

// Open implements protocol.Opener.
func (c countingOpener) Open(b protocol.Binding, sealed []byte) ([]byte, error) {
	r, err := c.op.Open(b, sealed)
	if err != nil {
		c.m.ReportRejected(telemetry.Rejection(err))
		c.n.Add(1)
	}
	return r, err
}

// Stop implements the Server service (shuffler only: rpcRoles): no more
// rounds.
func (s *Server) Stop(ctx context.Context, req *pb.StopRequest) (*pb.StopAck, error) {
	if s.coll != nil {
		if _, err := s.shardOf(req.Run); err != nil {
			return nil, err
		}
	} else if req.Run != s.run.Run {
		return nil, status.Errorf(codes.NotFound, "run %q, the server's is %q", req.Run, s.run.Run)
	}
	select {
	case s.stops <- req.Reason:
	default:
	}
	return &pb.StopAck{}, nil
}
