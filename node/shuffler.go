package node

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log"
	"math"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shuffledp/shuffledp/dashboard"
	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/internal/directed"
	"github.com/shuffledp/shuffledp/ledger"
	"github.com/shuffledp/shuffledp/pki"
	pb "github.com/shuffledp/shuffledp/proto/shuffledp/v1"
	"github.com/shuffledp/shuffledp/protocol"
	"github.com/shuffledp/shuffledp/route"
	"github.com/shuffledp/shuffledp/shard"
	"github.com/shuffledp/shuffledp/shuffler"
	"github.com/shuffledp/shuffledp/telemetry"
	"google.golang.org/grpc"
)

// DefaultRegisterTimeout bounds the shuffler's wait for MinConnected
// clients to register before its first round.
const DefaultRegisterTimeout = 10 * time.Minute

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
	// History is the state directory's record of the runs debited in
	// Store (ShufflerState; nil: none kept). Run asks it to check the
	// run's before it opens the run's ledger (a run debited from the
	// directory must be in Store) and records the run after, before the
	// first debit.
	History RunHistory
	// Delta and TargetEpsilon are the shuffler's own accounting
	// parameters (the flags --delta and --target-epsilon; target 0: none).
	// The shuffler's ledger is the authority on the budget: a run whose
	// public specification (from the untrusted server) has another delta,
	// or a target above TargetEpsilon (or none while TargetEpsilon is
	// set), is refused; a lower target of the server's is honoured.
	Delta         float64 `flag:"delta" default:"1e-5" usage:"the shuffler's delta: its ledger debits at it; a run of another delta is refused"`
	TargetEpsilon float64 `flag:"target-epsilon" usage:"the shuffler's target epsilon: no round is released past it; a run with a higher target (or none) is refused (0 = no target)"`
	// Bound is the shuffler's bound (--bound), which its ledger records:
	// "best" or the opt-in "best-conjecture"; a server's run of another
	// bound is refused.
	Bound string `flag:"bound" default:"best" usage:"the bound the shuffler's ledger debits by: best (every proven route) or best-conjecture (opt-in: also the conjectured shuffle Gaussian bounds, labelled); a server's run of another bound is refused"`
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
	// planned is the number of rounds the run plans (the RunSpec's; 0:
	// none published): the ledger debits no more.
	planned int64
	// stale is set by collect when the server refused the released batch
	// as computed on a model version it does not wait for: the next model
	// is asked for afresh.
	stale   bool
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
	case !route.IsBest(cfg.Bound):
		return nil, fmt.Errorf("bound must be best or %s, got %q", route.BoundBestConjecture, cfg.Bound)
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
	if s.planned = spec.GetRounds(); s.planned < 0 {
		return fmt.Errorf("shuffler: the server's run %q plans %d rounds", s.run.Run, s.planned)
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
	if s.cfg.History != nil {
		if err := s.cfg.History.CheckRun(ctx, s.local.Run); err != nil {
			return fmt.Errorf("shuffler: %w", err)
		}
	}
	l, err := ledger.Open(ctx, s.cfg.Store, s.local.Run, ledger.Options{Delta: s.cfg.Delta, Target: target,
		Bound: s.cfg.Bound, Fence: fence}) // as the server's loop (training.Config.LedgerOptions)
	if err != nil {
		return fmt.Errorf("shuffler: ledger: %w", err)
	}
	if s.cfg.History != nil {
		if err := s.cfg.History.BindRun(s.local.Run); err != nil {
			return fmt.Errorf("shuffler: %w", err)
		}
	}
	if st, err := l.Statement(); err == nil {
		s.cfg.Metrics.Ledger(st.Epsilon, int(l.Rounds()))
		s.cfg.Dashboard.Ledger(st.Epsilon, l.Rounds())
		s.cfg.Dashboard.EpsilonLabel(st.Label())
	}
	s.cfg.Dashboard.Configure(dashboard.RunFields(s.local), target)
	s.cfg.Metrics.Budget(s.cfg.RoundTimeout, target, s.cfg.Delta)
	run := s.local
	s.runPB = runConfigToPB(s.run)
	s.budget = &claimBudget{lease: s.lease, planned: s.planned, inner: &shuffler.LedgerBudget{Ledger: l,
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
	case bestName(spec.GetBound()) != bestName(s.cfg.Bound):
		return 0, fmt.Errorf("bound: the server's run %q has bound %s, the shuffler's --bound is %s; the shuffler's ledger is the budget's authority, so both must use one bound",
			s.run.Run, bestName(spec.GetBound()), bestName(s.cfg.Bound))
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
	st, err := l.Statement()
	if err != nil {
		return "n/a"
	}
	return directed.Upper(st.Epsilon, 4) + " by " + st.Label()
}

// over records that the run really ended: the clients are told it is
// finished when Run returns.
func (s *Shuffler) over() {
	s.mu.Lock()
	s.runOver = true
	s.mu.Unlock()
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

// bestName spells the default bound out ("" is "best").
func bestName(bound string) string {
	if bound == "" {
		return "best"
	}
	return bound
}
