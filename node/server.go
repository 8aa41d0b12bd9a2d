package node

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/shuffledp/shuffledp/data"
	"github.com/shuffledp/shuffledp/metrics"
	"github.com/shuffledp/shuffledp/model"
	"github.com/shuffledp/shuffledp/pki"
	pb "github.com/shuffledp/shuffledp/proto/shuffledp/v1"
	"github.com/shuffledp/shuffledp/protocol"
	"github.com/shuffledp/shuffledp/telemetry"
	"github.com/shuffledp/shuffledp/training"
)

// KeyFile is the server's HPKE key pair inside its state directory
// (protocol.ReceiverKey.MarshalBinary, mode 0600).
const KeyFile = "hpke.key"

// closeGrace bounds Close's wait for calls in flight.
const closeGrace = 2 * time.Second

// serverKeyID is the id of the key config a fresh server generates.
const serverKeyID = 1

// Dataset names the clients' data in a run's public specification.
type Dataset struct {
	// Name is mnist or synthetic.
	Name string
	// Seed generates the synthetic data set (data.Synthetic).
	Seed uint64
}

// ServerConfig configures a Server.
type ServerConfig struct {
	// Train is the run's configuration (the train flags).
	Train training.Config
	// Session is the server's state directory: lock, manifest, checkpoint,
	// metrics, receipts, the server's record of released batches, and its
	// HPKE key (KeyFile).
	Session training.SessionConfig
	// Dataset is published for the clients (the server holds only the
	// test set).
	Dataset Dataset
	// TLS is the listener's configuration (pki.ServerTLS with the server's
	// certificate).
	TLS *tls.Config
	// Metrics receives the server's Prometheus metrics (nil: none).
	Metrics *telemetry.ServerMetrics
}

// errStopped is returned to the trainer when the node is stopped in the
// middle of waiting for a batch.
var errStopped = errors.New("server node stopped")

// Server is the server role as a network node: a training.Trainer whose
// rounds come from the shuffler over gRPC (it implements
// training.BatchSource), the HPKE key pair it opens reports with, and the
// gRPC service the shuffler and clients call.
type Server struct {
	pb.UnimplementedServerServer
	cfg     ServerConfig
	session *training.Session
	key     protocol.ReceiverKey
	opener  *protocol.HPKEOpener
	tr      *training.Trainer
	spec    *pb.RunSpec
	run     protocol.RunConfig
	grpc    *grpc.Server

	mu       sync.Mutex
	changed  chan struct{} // closed and replaced when model or finished changes
	model    *pb.Model
	finished bool

	taken  time.Time // when the batch being applied was handed over
	takenN int       // its size
	// openRefused counts the reports that did not open (countingOpener),
	// so that the round hook can count those that opened but did not
	// decode (server.Step.Refused holds both).
	openRefused, openRefusedSeen atomic.Int64

	batches  chan batchOffer
	stops    chan string
	stopping chan struct{}
	stopOnce sync.Once
}

// batchOffer is a batch handed from SubmitBatch to the training loop.
type batchOffer struct {
	b     protocol.Batch
	taken chan struct{}
}

// NewServer opens the server's state directory (locked for the node's
// life) and its HPKE key pair, generated on first start. Data and model come
// next, with Attach.
func NewServer(ctx context.Context, cfg ServerConfig) (*Server, error) {
	if cfg.TLS == nil {
		return nil, errors.New("server: a TLS configuration is required")
	}
	if cfg.Train.Randomizer == training.RandomizerNone {
		return nil, errors.New("randomizer none has no shuffler: a networked run needs a private randomizer")
	}
	switch cfg.Train.Randomizer {
	case "rinf", "r1", "r2", "privunit", "djw", training.RandomizerGaussian:
	case training.RandomizerCentralGaussian:
		return nil, errors.New("randomizer central-gaussian: not over the network: its clients send their clipped gradients unnoised and the untrusted server adds the noise, so the server would see every raw gradient (use randomizer gaussian: each client adds its own noise)")
	default:
		return nil, fmt.Errorf("randomizer %s: a networked run supports the eps0-LDP randomizers rinf, r1, r2, privunit and djw, and gaussian", cfg.Train.Randomizer)
	}
	if cfg.Train.NoiseSum {
		return nil, errors.New("noise-sum: a simulation shortcut (one summed noise vector); networked clients add their own noise")
	}
	if cfg.Dataset.Name != "mnist" && cfg.Dataset.Name != "synthetic" {
		return nil, fmt.Errorf("dataset must be mnist or synthetic, got %q", cfg.Dataset.Name)
	}
	tc := cfg.Train
	session, err := training.OpenSession(ctx, cfg.Session, &tc)
	if err != nil {
		return nil, err
	}
	cfg.Train = tc
	s := &Server{cfg: cfg, session: session, changed: make(chan struct{}),
		batches: make(chan batchOffer), stops: make(chan string, 1), stopping: make(chan struct{})}
	if s.key, err = loadOrCreateKey(filepath.Join(session.Dir(), KeyFile)); err != nil {
		session.Close()
		return nil, err
	}
	return s, nil
}

// loadOrCreateKey reads the server's key pair, or generates and writes one.
func loadOrCreateKey(path string) (protocol.ReceiverKey, error) {
	var k protocol.ReceiverKey
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

// Session returns the server's state directory session.
func (s *Server) Session() *training.Session { return s.session }

// Config returns the (validated) training configuration, its RunID set.
func (s *Server) Config() training.Config { return s.cfg.Train }

// Attach builds the trainer for m (theta_0 in its parameters) and the test
// set, restoring the run's checkpoint if there is one; it returns the rounds
// the checkpoint had completed.
func (s *Server) Attach(m model.Model, test *data.Dataset) (int, error) {
	rsize, err := reportSize(s.cfg.Train, m)
	if err != nil {
		return 0, err
	}
	sealer, err := protocol.NewHPKESealer(s.key.Config, rsize)
	if err != nil {
		return 0, err
	}
	if s.opener, err = protocol.NewHPKEOpener(rsize, s.key); err != nil {
		return 0, err
	}
	opener := protocol.Opener(s.opener)
	if s.cfg.Metrics != nil {
		opener = countingOpener{s.opener, s.cfg.Metrics, &s.openRefused}
	}
	opts := append(s.session.Options(), training.WithRemote(s), training.WithSealing(sealer, opener))
	if s.tr, err = training.New(s.cfg.Train, m, nil, test, opts...); err != nil {
		return 0, err
	}
	done, err := s.session.Attach(s.tr)
	if err != nil {
		return 0, err
	}
	s.run = s.tr.RunConfig()
	kc, err := s.key.Config.MarshalBinary()
	if err != nil {
		return 0, err
	}
	s.spec = &pb.RunSpec{Config: runConfigToPB(s.run), KeyConfigs: [][]byte{kc},
		Delta: s.cfg.Train.Delta, TargetEpsilon: s.cfg.Train.TargetEpsilon,
		Dataset: &pb.Dataset{Name: s.cfg.Dataset.Name, Seed: s.cfg.Dataset.Seed}}
	return done, nil
}

// reportSize is the randomizer's report size for the run of cfg on m.
func reportSize(cfg training.Config, m model.Model) (int, error) {
	r, err := protocol.NewRandomizer(protocol.RunConfig{Randomizer: cfg.Randomizer, Eps0: cfg.Eps0, Dim: m.NumParams(), Clip: cfg.Clip, Sigma: cfg.Sigma})
	if err != nil {
		return 0, err
	}
	return r.ReportSize(), nil
}

// Trainer returns the attached trainer.
func (s *Server) Trainer() *training.Trainer { return s.tr }

// Serve serves the gRPC service on lis until Close. It needs Attach first.
func (s *Server) Serve(lis net.Listener) error {
	if s.spec == nil {
		return errors.New("server: Serve before Attach")
	}
	s.mu.Lock()
	if s.grpc == nil {
		s.grpc = grpc.NewServer(serverOptions(s.cfg.TLS)...)
		pb.RegisterServerServer(s.grpc, s)
	}
	g := s.grpc
	s.mu.Unlock()
	return g.Serve(lis)
}

// Train runs the attached trainer through the session (training.Session
// Train: checkpoint at every evaluation, metrics, one more checkpoint at
// the end) until the run's rounds are done, the shuffler reports the budget
// spent, or ctx is cancelled (then it returns training.StopCancelled after
// checkpointing). Then the node tells the shuffler the run is finished.
func (s *Server) Train(ctx context.Context, hooks training.Hooks) (training.StopReason, error) {
	if s.tr == nil {
		return "", errors.New("server: Train before Attach")
	}
	stop := context.AfterFunc(ctx, s.stop)
	defer stop()
	if m := s.cfg.Metrics; m != nil {
		onRound, onEval := hooks.OnRound, hooks.OnEval
		hooks.OnRound = func(r training.RoundStats) error {
			s.mu.Lock()
			taken := s.taken
			s.mu.Unlock()
			// Reports that did not open are counted by countingOpener;
			// those that opened but did not decode are counted here.
			m.RoundAggregated(r.Reports, time.Since(taken))
			seen := s.openRefused.Load()
			for range int64(r.Refused) - (seen - s.openRefusedSeen.Swap(seen)) {
				m.ReportRejected(telemetry.ReasonMalformed)
			}
			if onRound != nil {
				return onRound(r)
			}
			return nil
		}
		hooks.OnEval = func(r metrics.Record) error {
			if r.TestAccuracy != nil {
				m.Accuracy("raw", *r.TestAccuracy)
			}
			if r.TestAccuracyEMA != nil {
				m.Accuracy("ema", *r.TestAccuracyEMA)
			}
			if onEval != nil {
				return onEval(r)
			}
			return nil
		}
	}
	reason, err := s.session.Train(ctx, hooks)
	if errors.Is(err, errStopped) {
		reason, err = training.StopCancelled, nil
	}
	s.mu.Lock()
	s.finished = true
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
	return reason, err
}

func (s *Server) stop() { s.stopOnce.Do(func() { close(s.stopping) }) }

// Close stops serving and releases the state directory.
func (s *Server) Close() error {
	s.stop()
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
	return s.session.Close()
}

// Next implements training.BatchSource: it publishes m and waits for the
// shuffler's next released batch.
func (s *Server) Next(ctx context.Context, m protocol.Model) (protocol.Batch, error) {
	pm := &pb.Model{Run: m.Run, Version: m.Version, Params: append([]float64(nil), m.Params...), KeyId: uint32(s.key.Config.ID)}
	s.mu.Lock()
	s.model = pm
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
	select {
	case o := <-s.batches:
		close(o.taken)
		s.mu.Lock()
		s.taken, s.takenN = time.Now(), len(o.b.Reports)
		s.mu.Unlock()
		return o.b, nil
	case reason := <-s.stops:
		return protocol.Batch{}, fmt.Errorf("the shuffler stopped the run (%s): %w", reason, training.ErrBudgetExhausted)
	case <-s.stopping:
		return protocol.Batch{}, errStopped
	case <-ctx.Done():
		return protocol.Batch{}, ctx.Err()
	}
}

// fromShuffler refuses a call from anyone but the shuffler.
func fromShuffler(ctx context.Context) error {
	p, ok := peer.FromContext(ctx)
	if ok {
		if ti, ok := p.AuthInfo.(credentials.TLSInfo); ok && pki.IsShuffler(ti.State) {
			return nil
		}
	}
	return status.Error(codes.PermissionDenied, pki.ErrNotShuffler.Error())
}

// GetRun implements the Server service: the public run specification.
func (s *Server) GetRun(context.Context, *pb.GetRunRequest) (*pb.RunSpec, error) {
	return s.spec, nil
}

// GetModel implements the Server service (shuffler only).
func (s *Server) GetModel(ctx context.Context, req *pb.GetModelRequest) (*pb.Model, error) {
	if err := fromShuffler(ctx); err != nil {
		return nil, err
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

// SubmitBatch implements the Server service (shuffler only): the batch is
// checked (run, report length, batch size, distinct report ids, one key id
// the server holds) and handed to the training loop.
func (s *Server) SubmitBatch(ctx context.Context, pbb *pb.Batch) (*pb.BatchAck, error) {
	if err := fromShuffler(ctx); err != nil {
		return nil, err
	}
	b, err := s.checkBatch(pbb)
	if err != nil {
		s.cfg.Metrics.BatchRejected(batchReason(err))
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	o := batchOffer{b: b, taken: make(chan struct{})}
	select {
	case s.batches <- o:
		return &pb.BatchAck{}, nil
	case <-s.stopping:
		return nil, status.Error(codes.Unavailable, "server stopping")
	case <-ctx.Done():
		return nil, status.FromContextError(ctx.Err()).Err()
	}
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
	b := protocol.Batch{Run: p.Run, Round: p.Round, Reports: make([][]byte, n)}
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

// Stop implements the Server service (shuffler only): no more rounds.
func (s *Server) Stop(ctx context.Context, req *pb.StopRequest) (*pb.StopAck, error) {
	if err := fromShuffler(ctx); err != nil {
		return nil, err
	}
	if req.Run != s.run.Run {
		return nil, status.Errorf(codes.NotFound, "run %q, the server's is %q", req.Run, s.run.Run)
	}
	select {
	case s.stops <- req.Reason:
	default:
	}
	return &pb.StopAck{}, nil
}
