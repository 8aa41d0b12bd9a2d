package node

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"math"
	"net"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/shuffledp/shuffledp/dashboard"
	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/ledger"
	"github.com/shuffledp/shuffledp/pki"
	pb "github.com/shuffledp/shuffledp/proto/shuffledp/v1"
	"github.com/shuffledp/shuffledp/protocol"
	"github.com/shuffledp/shuffledp/shard"
	"github.com/shuffledp/shuffledp/shuffler"
	"github.com/shuffledp/shuffledp/telemetry"
)

// DefaultRegisterTimeout bounds the shuffler's wait for MinConnected
// clients to register before its first round.
const DefaultRegisterTimeout = 10 * time.Minute

// registerLogEvery is how often a shuffler waiting for clients logs how
// many are registered.
var registerLogEvery = 30 * time.Second

// DefaultModelTimeout bounds the shuffler's wait for the server's next
// model (the server steps and, every --eval-every rounds, evaluates before
// it publishes one).
const DefaultModelTimeout = 30 * time.Minute

// DefaultRoundTimeout is the round's deadline: how long after relaying a
// round the shuffler releases its batch, with a dummy report in the place
// of every sampled client that has not delivered by then.
const DefaultRoundTimeout = 2 * time.Minute

// ShufflerConfig configures a Shuffler.
type ShufflerConfig struct {
	// Server is the server's address; ServerTLS the configuration to dial
	// it with (pki.ClientTLS with the shuffler's bundle; only the server's
	// identity is accepted).
	Server    string `flag:"server" metavar:"ADDR" usage:"the server's ADDR"`
	ServerTLS *tls.Config
	// TLS is the listener's configuration (pki.ServerTLS, the shuffler's
	// certificate).
	TLS *tls.Config
	// Enroller checks the clients' credentials.
	Enroller *pki.Enroller
	// Store is the durable ledger (the budget is debited there before a
	// batch is forwarded) and the report-id store (replays across rounds
	// and restarts).
	Store ledger.Backend
	// Delta and TargetEpsilon are the shuffler's own accounting
	// parameters (the flags --delta and --target-epsilon; target 0: none).
	// The shuffler's ledger is the authority on the budget: a run whose
	// public specification (from the untrusted server) has another delta,
	// or a target above TargetEpsilon (or none while TargetEpsilon is
	// set), is refused; a lower target of the server's is honoured.
	Delta         float64 `flag:"delta" default:"1e-5" usage:"the shuffler's delta: its ledger debits at it; a run of another delta is refused"`
	TargetEpsilon float64 `flag:"target-epsilon" usage:"the shuffler's target epsilon: no round is released past it; a run with a higher target (or none) is refused (0 = no target)"`
	// Adjacency is the weakest neighbouring relation the shuffler debits a
	// Gaussian run's rounds for (the flag --adjacency): replace-one (the
	// default when empty) or zero-out. Like the delta, it is the trusted
	// shuffler's, not the untrusted server's: a server that publishes a
	// zero-out run to a replace-one shuffler (whose epsilon would be the
	// smaller zero-out one) is refused; a stricter relation of the
	// server's is honoured. The eps0-LDP randomizers are replace-one
	// natively.
	Adjacency string `flag:"adjacency" default:"replace-one" usage:"the weakest neighbouring relation the shuffler debits Gaussian runs for: replace-one or zero-out (a server's run stated for a weaker one is refused)"`
	// Metrics receives the shuffler's Prometheus metrics (nil: none).
	Metrics *telemetry.ShufflerMetrics
	// Dashboard receives the shuffler's figures for its operator's page
	// (nil: none): the run's configuration, every released round with its
	// dummy reports and the clients connected, the ledger's epsilon, the
	// discarded rounds and rejected reports by reason.
	Dashboard *dashboard.ShufflerBoard
	// RoundTimeout is the round's deadline (0 means DefaultRoundTimeout):
	// the batch is released that long after the round was relayed, each
	// sampled client that has not delivered replaced by a dummy report
	// (shuffler.DummyReports). The deadline is fixed by configuration and
	// never adapted from observed dropouts: the release time must not
	// depend on who dropped out (docs/proofs/dummy-reports.md, (A3)).
	RoundTimeout time.Duration `flag:"round-timeout" default:"2m" usage:"the round's deadline: its batch is released this long after the round was relayed, a dummy report in the place of each sampled client that has not delivered"`
	// ReleaseWhenComplete releases a round as soon as every sampled client
	// delivered, instead of at the deadline. Opt-in: the release time then
	// reveals whether some sampled client dropped out, which is harmless
	// only if dropout is independent of the data and of the sample and
	// exchangeable across clients (each client independently with one
	// probability; docs/proofs/dummy-reports.md, (A2')). Without it a
	// client whose dropout depends on its own data leaks it.
	ReleaseWhenComplete bool `flag:"release-when-complete" usage:"release a round as soon as every sampled client delivered (reveals whether someone dropped out: sound only if dropout is independent of the data and equally likely for every client)"`
	// MinConnected is how many clients must be registered before the
	// shuffler opens its first round (0: the whole population). After
	// that, rounds open whoever is connected: a sampled client that is not
	// connected, or does not deliver, is a dropout and gets a dummy.
	MinConnected int `flag:"min-connected" usage:"registered clients needed before the first round (0: all n); later rounds sample k of n whether or not they are connected"`
	// RegisterTimeout bounds the wait for MinConnected clients before the
	// first round (0: DefaultRegisterTimeout): past it Run fails, saying
	// how many registered and how many it waited for.
	RegisterTimeout time.Duration `flag:"register-timeout" default:"10m" usage:"how long to wait for --min-connected clients to register before the first round (logging how many every 30s); then exit 1 saying how many did"`
	// ModelTimeout bounds each wait for the server's next model (0:
	// DefaultModelTimeout): past it Run fails naming the server, the model
	// version waited after and the flag.
	ModelTimeout time.Duration `flag:"model-timeout" default:"30m" usage:"how long to wait for the server's next model (it steps and evaluates first); then exit 1 naming the server"`
	// Log receives one line per round and per rejection burst (nil: none).
	Log *log.Logger
	// MaxConns bounds the listener's open connections (0:
	// DefaultMaxConns); FirstMessage the wait for a stream's first
	// message, its credentials (0: DefaultFirstMessage plus 40 µs per
	// client of the run, firstMessageWait).
	MaxConns     int
	FirstMessage time.Duration
	// ConnectTimeout bounds every wait for the server: to answer at start,
	// and to come back after it went away mid-run (0:
	// DefaultConnectTimeout). Past it Run fails, naming the server.
	ConnectTimeout time.Duration `flag:"connect-timeout" default:"1m" usage:"how long to wait for the server to answer, at start and after it went away mid-run; then exit 1 naming it"`
	// Shard and Shards, with Shards > 1, make this shuffler a replica of
	// shard Shard of a run served by Shards shuffler shards
	// (docs/shards.md): it serves only the shard's clients
	// (shard.Split), samples k_s of its n_s, debits its own ledger rows
	// (run id shard.RunID) with its own event, and talks to the server
	// under the shard's run id. It serves only while it holds the shard's
	// lease (shard.Acquire on LeaseURL, the ledger's PostgreSQL database):
	// a second replica of the same shard is a standby, waiting in Run
	// until the first one's session ends.
	Shard    int `flag:"shard" usage:"this shuffler's shard, 0..S-1, with --shards S (docs/shards.md); a second shuffler of the same shard is its standby: it listens only once it holds the shard's lease"`
	Shards   int `flag:"shards" default:"1" usage:"shuffler shards serving the run (the server's --shards); S > 1 needs the shared PostgreSQL --ledger"`
	LeaseURL string
	// LeaseTTL is the shard lease's TTL (shard.AcquireTTL; 0:
	// shard.DefaultLeaseTTL): how long a paused replica keeps the shard.
	LeaseTTL time.Duration `flag:"lease-ttl" default:"15s" usage:"with --shards: how long a paused shuffler keeps its shard's lease (its heartbeat renews it while it runs; PostgreSQL 14+)"`
	// Listen, used when Run is given a nil listener, opens the listener
	// once the shuffler is ready to serve: in a sharded run after the
	// shard's lease is held, so that a standby binds the shard's address
	// only when it takes the shard over.
	Listen func() (net.Listener, error)
}

// Shuffler is the shuffler role as a network node: a shuffler.Service
// (sample, collect one report per sampled client, debit, permute) with a
// shuffler.LedgerBudget on the durable ledger, behind the gRPC service the
// clients call; it dials the server for the model and forwards batches.
type Shuffler struct {
	pb.UnimplementedShufflerServer
	cfg   ShufflerConfig
	stats counters

	// Set up by Run.
	ready chan struct{}
	// run is the run's configuration as the server publishes it (what the
	// clients check and seal for); local is the part this shuffler
	// serves: run itself, or in a sharded run its shard's
	// (shard.PartConfig: the shard's run id, n_s, k_s, minimum batch),
	// whose clients are lo..lo+n_s-1 (the Service numbers them from 0).
	run     protocol.RunConfig
	local   protocol.RunConfig
	lo      int64
	lease   *shard.Lease
	runPB   *pb.RunConfig // relayed with every assignment
	keys    map[uint8]protocol.KeyConfig
	svc     *shuffler.Service
	budget  *claimBudget
	dummies *roundDummies
	started bool // the first round was opened (MinConnected no longer applies)
	// connects counts the times the connection to the server became
	// ready: a change means the server may have restarted from an older
	// checkpoint, so the next model is asked for afresh.
	connects *atomic.Int64

	mu       sync.Mutex
	regCh    chan struct{} // closed and replaced when registrations change
	workers  map[int64]*worker
	round    *openRound // nil between rounds
	prevIDs  map[[protocol.ReportIDSize]byte]struct{}
	finished bool
	grpc     *grpc.Server
	// runOver is set when the run really ended (the server finished it,
	// or the budget is spent and the server was told): only then are the
	// clients told it is finished. stopping is closed when the shuffler
	// stops before that (cancelled, or an error): the clients' Work
	// streams end with codes.Unavailable, so they know it went away.
	runOver  bool
	stopping chan struct{}
	// stopCtx is Run's context: cancelled when the shuffler is asked to
	// stop (forward bounds its wait for the server by it).
	stopCtx    context.Context
	serverConn *grpc.ClientConn
	// cpuMark is the process's CPU time when the last round was released
	// (zero before the first): a release's log line gives the CPU spent
	// since, the shuffler's cost of the round (reports per CPU-second).
	cpuMark time.Duration
	// forwardBuf is the memory of the last batch forwarded (forward).
	forwardBuf []byte
	// spareIDs is a round's report-id set no longer used (that of the
	// round before the previous one), cleared and reused by the next.
	spareIDs map[[protocol.ReportIDSize]byte]struct{}
}

// processCPU returns the process's user and system CPU time (getrusage).
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

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

// NewShuffler returns a shuffler node; Run connects it to the server.
func NewShuffler(cfg ShufflerConfig) (*Shuffler, error) {
	switch {
	case cfg.TLS == nil || cfg.ServerTLS == nil:
		return nil, errors.New("shuffler: TLS configurations are required")
	case cfg.Enroller == nil:
		return nil, errors.New("shuffler: an enroller (client credentials) is required")
	case cfg.Store == nil:
		return nil, errors.New("shuffler: a ledger store is required")
	case !(cfg.Delta > 0 && cfg.Delta < 1):
		return nil, fmt.Errorf("delta must be in (0, 1), got %g (the shuffler's own delta, which its ledger debits at)", cfg.Delta)
	case math.IsNaN(cfg.TargetEpsilon) || math.IsInf(cfg.TargetEpsilon, 0) || cfg.TargetEpsilon < 0:
		return nil, fmt.Errorf("target-epsilon must be a finite number >= 0 (0: none), got %g", cfg.TargetEpsilon)
	case cfg.RoundTimeout < 0:
		return nil, fmt.Errorf("round-timeout must be >= 0, got %v", cfg.RoundTimeout)
	case cfg.RegisterTimeout < 0:
		return nil, fmt.Errorf("register-timeout must be >= 0, got %v", cfg.RegisterTimeout)
	case cfg.Shards > 1 && (cfg.Shard < 0 || cfg.Shard >= cfg.Shards):
		return nil, fmt.Errorf("shard must be in [0, shards=%d), got %d", cfg.Shards, cfg.Shard)
	case cfg.Shards > 1 && !ledger.IsPostgresURL(cfg.LeaseURL):
		return nil, errors.New("shards: a sharded shuffler needs the shared PostgreSQL ledger (--ledger postgres://...): the shard's lease and every replica's debits live there")
	case cfg.MinConnected < 0:
		return nil, fmt.Errorf("min-connected must be >= 0 (0: the whole population), got %d", cfg.MinConnected)
	case cfg.Adjacency != "" && cfg.Adjacency != event.AdjacencyReplaceOne && cfg.Adjacency != event.AdjacencyZeroOut:
		return nil, fmt.Errorf("adjacency must be %s or %s (the weakest relation the shuffler debits Gaussian runs for), got %q",
			event.AdjacencyReplaceOne, event.AdjacencyZeroOut, cfg.Adjacency)
	}
	if err := checkListenerTLS("shuffler", cfg.TLS); err != nil {
		return nil, err
	}
	if cfg.Adjacency == "" {
		cfg.Adjacency = event.AdjacencyReplaceOne
	}
	if cfg.RoundTimeout == 0 {
		cfg.RoundTimeout = DefaultRoundTimeout
	}
	if cfg.RegisterTimeout == 0 {
		cfg.RegisterTimeout = DefaultRegisterTimeout
	}
	if cfg.ModelTimeout < 0 {
		return nil, fmt.Errorf("model-timeout must be >= 0, got %v", cfg.ModelTimeout)
	}
	if cfg.ModelTimeout == 0 {
		cfg.ModelTimeout = DefaultModelTimeout
	}
	if cfg.ConnectTimeout < 0 {
		return nil, fmt.Errorf("connect-timeout must be >= 0, got %v", cfg.ConnectTimeout)
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = DefaultConnectTimeout
	}
	if err := CheckOwnCertificates("shuffler", cfg.TLS, time.Now()); err != nil {
		return nil, err
	}
	if err := CheckOwnCertificates("shuffler", cfg.ServerTLS, time.Now()); err != nil {
		return nil, err
	}
	return &Shuffler{cfg: cfg, ready: make(chan struct{}), regCh: make(chan struct{}), workers: map[int64]*worker{},
		stopping: make(chan struct{})}, nil
}

// Started reports whether Run got the run's specification from the server,
// opened the run's ledger and began serving clients (false: it stopped
// before, e.g. the server never answered, and has debited nothing).
func (s *Shuffler) Started() bool {
	select {
	case <-s.ready:
		return true
	default:
		return false
	}
}

// Stats returns a snapshot of the shuffler's counters.
func (s *Shuffler) Stats() Stats { return s.stats.snapshot() }

func (s *Shuffler) logf(format string, args ...any) {
	if s.cfg.Log != nil {
		s.cfg.Log.Printf(format, args...)
	}
}

// Run connects to the server, opens the run's ledger, serves the clients on
// lis and runs rounds until the server finishes the run, the budget is
// spent (the server is told), or ctx is cancelled.
func (s *Shuffler) Run(ctx context.Context, lis net.Listener) error {
	s.stopCtx = ctx
	if err := waitReachable(ctx, pki.RoleServer, s.cfg.Server, s.cfg.ServerTLS, s.cfg.ConnectTimeout); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("shuffler: %w", err)
	}
	conn, err := dial(s.cfg.Server, s.cfg.ServerTLS, pki.RoleServer)
	if err != nil {
		return err
	}
	defer conn.Close()
	s.serverConn = conn
	srv := pb.NewServerClient(conn)
	gctx, cancel := context.WithTimeout(ctx, s.cfg.ConnectTimeout)
	spec, err := srv.GetRun(gctx, &pb.GetRunRequest{}, grpc.WaitForReady(true))
	cancel()
	if err != nil {
		return fmt.Errorf("shuffler: run spec from the server %s: %w", s.cfg.Server, err)
	}
	s.connects = watchConnects(ctx, conn)
	if s.run, err = runConfigFromPB(spec.Config); err != nil {
		return err
	}
	if s.keys, err = keyConfigs(spec); err != nil {
		return err
	}
	target, err := s.budgetParams(spec)
	if err != nil {
		return err
	}
	s.local = s.run
	if s.cfg.Shards > 1 {
		if err := s.takeShard(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		defer s.lease.Release()
	}
	var fence *ledger.Fence
	if s.lease != nil {
		// A shard's replica debits under its lease's fence: once another
		// replica took the shard, this one's debits fail in their own
		// transaction (ledger.ErrFenced), whatever its lease check said.
		fence = s.lease.Fence()
	}
	l, err := ledger.Open(ctx, s.cfg.Store, s.local.Run, ledger.Options{Delta: s.cfg.Delta, Target: target,
		// The same stop as the server's loop (training.Config.LedgerOptions):
		// past the cheap routes, the PLD route may admit further rounds.
		PLDStop: true, Fence: fence})
	if err != nil {
		return fmt.Errorf("shuffler: ledger: %w", err)
	}
	if g, err := l.Epsilon(); err == nil {
		s.cfg.Metrics.Ledger(g.Epsilon, int(l.Rounds()))
		s.cfg.Dashboard.Ledger(g.Epsilon, l.Rounds())
	}
	s.cfg.Dashboard.Configure(dashboard.RunFields(s.local), target)
	s.cfg.Metrics.Budget(s.cfg.RoundTimeout, target, s.cfg.Delta)
	run := s.local
	s.runPB = runConfigToPB(s.run)
	s.budget = &claimBudget{lease: s.lease, inner: &shuffler.LedgerBudget{Ledger: l,
		Event: func(k int) event.Event { return run.Round(k).Event() }}}
	if s.cfg.MinConnected > s.local.Population {
		return fmt.Errorf("min-connected %d: the run has %d clients", s.cfg.MinConnected, s.local.Population)
	}
	// Under check-in the shuffler flips every enrolled client's coin
	// itself and pads the selected clients that do not deliver, exactly
	// as it pads the sampled ones: the batch size is the number selected,
	// whoever dropped out (docs/proofs/dummy-reports.md, check-in rounds).
	// ReuseBatch: forward copies the batch into its message and keeps
	// nothing of it once SubmitBatch returned.
	svcCfg := shuffler.ServiceConfig{Run: s.local, Budget: s.budget,
		SelectCheckIn: s.run.Participation == protocol.ParticipationCheckIn, ReuseBatch: true}
	// Dummies are sealed like the clients' reports: to the run's id, in a
	// sharded run the shard's (the run id of the model relayed to them).
	if s.dummies, err = newRoundDummies(s.local, s.local.Run, s.keys); err != nil {
		return fmt.Errorf("shuffler: %w", err)
	}
	svcCfg.Dummies = s.dummies
	s.budget.dummies = s.dummies
	if s.svc, err = shuffler.NewService(svcCfg); err != nil {
		return err
	}
	s.mu.Lock()
	s.grpc = grpc.NewServer(append(serverOptions(s.cfg.TLS, serverLimits{recv: reportLimit(s.run), firstMessage: firstMessageWait(s.run, s.cfg.FirstMessage), idle: s.cfg.RoundTimeout, authorize: s.authorizeCall,
		window: submitWindow, connWindow: submitConnWindow}),
		grpc.ForceServerCodecV2(newSubmitCodec()))...)
	pb.RegisterShufflerServer(s.grpc, s)
	g := s.grpc
	s.mu.Unlock()
	if lis == nil {
		if s.cfg.Listen == nil {
			return errors.New("shuffler: no listener")
		}
		if lis, err = s.cfg.Listen(); err != nil {
			return err
		}
	}
	close(s.ready)
	serveErr := make(chan error, 1)
	go func() { serveErr <- g.Serve(newLimitListener(lis, s.cfg.MaxConns)) }()
	defer func() {
		s.mu.Lock()
		over := s.runOver
		s.mu.Unlock()
		if over {
			s.finish()
		} else {
			close(s.stopping)
		}
		stopServing(g, closeGrace)
	}()
	s.logf("run %s: %s; reports of %d bytes; ledger at round %d, epsilon so far %s",
		s.local.Run, s.local.Round(s.local.PerRound).Event(), s.local.ReportBytes, max(l.LastRound(), 0), epsString(l))
	err = s.rounds(ctx, srv, l)
	select {
	case serr := <-serveErr:
		if err == nil && serr != nil {
			err = serr
		}
	default:
	}
	return err
}

// budgetParams checks the server's accounting parameters against the
// shuffler's own and returns the target the ledger debits against: the
// shuffler's, or the server's when that is lower (more private).
func (s *Shuffler) budgetParams(spec *pb.RunSpec) (float64, error) {
	own, theirs := s.cfg.TargetEpsilon, spec.GetTargetEpsilon()
	switch {
	case spec.GetDelta() != s.cfg.Delta:
		return 0, fmt.Errorf("delta: the server's run %q has delta %g, the shuffler's --delta is %g; the shuffler's ledger is the budget's authority, so both must use one delta",
			s.run.Run, spec.GetDelta(), s.cfg.Delta)
	case s.run.Randomizer == protocol.RandomizerGaussian && s.run.Adjacency == event.AdjacencyZeroOut &&
		s.cfg.Adjacency != event.AdjacencyZeroOut:
		return 0, fmt.Errorf("adjacency: the server's run %q is stated for %s adjacency, the shuffler's --adjacency is %s; a %s epsilon is smaller than the %s one, so the shuffler refuses to debit at it",
			s.run.Run, s.run.Adjacency, s.cfg.Adjacency, event.AdjacencyZeroOut, s.cfg.Adjacency)
	case own > 0 && (theirs == 0 || theirs > own):
		srv := fmt.Sprintf("target epsilon %g", theirs)
		if theirs == 0 {
			srv = "no target epsilon"
		}
		return 0, fmt.Errorf("target-epsilon: the server's run %q has %s, above the shuffler's --target-epsilon %g; refusing to serve it",
			s.run.Run, srv, own)
	case theirs > 0 && (own == 0 || theirs < own):
		return theirs, nil
	}
	return own, nil
}

func epsString(l *ledger.Ledger) string {
	g, err := l.Epsilon()
	if err != nil {
		return "n/a"
	}
	return fmt.Sprintf("%.4g", g.Epsilon)
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
		for released := false; !released; {
			if err := s.waitClients(ctx); err != nil {
				if ctx.Err() != nil {
					return nil // cancelled
				}
				return err
			}
			round, err := s.svc.Open(ctx, protocol.Model{Run: s.local.Run, Version: m.Version, Params: m.Params})
			if errors.Is(err, ledger.ErrBudgetExhausted) {
				s.logf("budget spent (%v); stopping the run", err)
				_, serr := srv.Stop(ctx, &pb.StopRequest{Run: s.local.Run, Reason: "target-epsilon"})
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
		if g, gerr := l.Epsilon(); gerr == nil {
			s.cfg.Metrics.RoundReleased(rel.Reports, time.Since(start), g.Epsilon, int(l.Rounds()))
			s.mu.Lock()
			connected := len(s.workers)
			s.mu.Unlock()
			s.cfg.Dashboard.Released(rel.Reports, rel.Dummies, connected, time.Since(start), g.Epsilon, l.Rounds())
		}
		cpu := processCPU()
		s.logf("round %d released: %d reports (%d dummies), model version %d, %.3fs; ledger %d rounds, epsilon %s; shuffler CPU %.3fs since the last release",
			round.ID, rel.Reports, rel.Dummies, m.Version, time.Since(start).Seconds(), l.Rounds(), epsString(l), (cpu - s.cpuMark).Seconds())
		s.cpuMark = cpu
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
		_, serr := srv.Stop(ctx, &pb.StopRequest{Run: s.local.Run, Reason: "target-epsilon"})
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
	_, err := srv.SubmitBatch(fctx, &pb.Batch{Run: b.Run, Round: b.Round, ReportBytes: int64(size), Reports: buf}, grpc.WaitForReady(true))
	switch status.Code(err) {
	case codes.Unavailable:
		return fmt.Errorf("the server at %s went away before the run finished: %w", s.cfg.Server, err)
	case codes.AlreadyExists:
		return fmt.Errorf("%w (%v)", errAlreadyDelivered, err)
	}
	return err
}

// over records that the run really ended: the clients are told it is
// finished when Run returns.
func (s *Shuffler) over() {
	s.mu.Lock()
	s.runOver = true
	s.mu.Unlock()
}

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

// stopServing stops g gracefully, and at once after grace (a client
// stream that does not end by itself).
func stopServing(g *grpc.Server, grace time.Duration) {
	done := make(chan struct{})
	go func() { g.GracefulStop(); close(done) }()
	select {
	case <-done:
	case <-time.After(grace):
		g.Stop()
		<-done
	}
}

// finish tells every client process the run is over.
func (s *Shuffler) finish() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.finished {
		return
	}
	s.finished = true
	for _, w := range uniqueWorkers(s.workers) {
		select {
		case w.send <- &pb.Assignment{Finished: true}:
		default:
		}
	}
	close(s.regCh)
	s.regCh = make(chan struct{})
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

// roundDummies supplies the Service's dummy reports for the open round:
// those precomputed while the round ran, or fresh ones (one
// shuffler.DummyReports per key id, sealed to the round's key with noise
// from crypto/rand).
type roundDummies struct {
	run protocol.RunConfig
	// bindRun is the run id reports are sealed to (run's own: in a
	// sharded run the shard's id, shard.RunID).
	bindRun string
	keys    map[uint8]protocol.KeyConfig
	mu      sync.Mutex
	makers  map[uint8]*shuffler.DummyReports
	round   int64
	keyID   uint8
	pre     [][]byte
	issued  [][protocol.ReportIDSize]byte // ids of the dummies handed out for round
	// got marks the slots whose client delivered: their precomputed dummy
	// is dropped (made anyway, so the work per round is constant; dropped
	// so the round holds about k reports, not 2k).
	got []bool
}

// delivered records that the client of slot delivered in round id.
func (d *roundDummies) delivered(id int64, slot int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if id != d.round || slot < 0 || slot >= len(d.got) {
		return
	}
	d.got[slot] = true
	if slot < len(d.pre) {
		d.pre[slot] = nil
	}
}

// issuedIDs returns the report ids of the dummies handed out for the
// current round.
func (d *roundDummies) issuedIDs() [][protocol.ReportIDSize]byte {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.issued)
}

// newRoundDummies returns the dummy source of run; it builds the maker of
// one published key now, so that a run whose randomizer cannot make
// dummies is refused before its first round.
func newRoundDummies(run protocol.RunConfig, bindRun string, keys map[uint8]protocol.KeyConfig) (*roundDummies, error) {
	d := &roundDummies{run: run, bindRun: bindRun, keys: keys, makers: map[uint8]*shuffler.DummyReports{}}
	for id := range keys {
		if _, err := d.maker(id); err != nil {
			return nil, err
		}
		break
	}
	return d, nil
}

func (d *roundDummies) maker(id uint8) (*shuffler.DummyReports, error) {
	if m := d.makers[id]; m != nil {
		return m, nil
	}
	kc, ok := d.keys[id]
	if !ok {
		return nil, fmt.Errorf("dummy reports: key id %d is not published by the server", id)
	}
	sealer, err := protocol.NewHPKESealer(kc, d.run.ReportBytes-protocol.HPKEOverhead)
	if err != nil {
		return nil, fmt.Errorf("dummy reports: %w", err)
	}
	m, err := shuffler.NewDummyReports(d.run, sealer, nil)
	if err != nil {
		return nil, err
	}
	d.makers[id] = m
	return m, nil
}

// set starts round r of slots sampled clients, whose reports are sealed
// to key id.
func (d *roundDummies) set(r protocol.Round, id uint8, slots int) {
	d.mu.Lock()
	d.round, d.keyID, d.pre, d.issued = r.ID, id, nil, nil
	d.got = make([]bool, slots)
	d.mu.Unlock()
}

// precompute makes count dummies for round r (constant work per round).
func (d *roundDummies) precompute(r protocol.Round, count int) {
	r.Model.Run = d.bindRun
	d.mu.Lock()
	m, err := d.maker(d.keyID)
	d.mu.Unlock()
	if err != nil {
		return // Dummy reports the error at release
	}
	pre, err := m.Precompute(r, count)
	if err != nil {
		return
	}
	d.mu.Lock()
	if d.round == r.ID {
		for slot, got := range d.got {
			if got && slot < len(pre) {
				pre[slot] = nil
			}
		}
		d.pre = pre
	}
	d.mu.Unlock()
}

// Dummy implements shuffler.Dummies.
func (d *roundDummies) Dummy(r protocol.Round, slot int) ([]byte, error) {
	r.Model.Run = d.bindRun
	d.mu.Lock()
	defer d.mu.Unlock()
	var rep []byte
	if r.ID == d.round && slot < len(d.pre) && d.pre[slot] != nil {
		rep, d.pre[slot] = d.pre[slot], nil
	} else {
		m, err := d.maker(d.keyID)
		if err != nil {
			return nil, err
		}
		if rep, err = m.Make(r); err != nil {
			return nil, err
		}
	}
	id, err := protocol.ReportID(rep)
	if err != nil {
		return nil, err
	}
	d.issued = append(d.issued, id)
	return rep, nil
}
