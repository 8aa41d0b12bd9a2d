package node

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/shuffledp/shuffledp/client"
	"github.com/shuffledp/shuffledp/data"
	"github.com/shuffledp/shuffledp/model"
	"github.com/shuffledp/shuffledp/pki"
	pb "github.com/shuffledp/shuffledp/proto/shuffledp/v1"
	"github.com/shuffledp/shuffledp/protocol"
	"github.com/shuffledp/shuffledp/randomizer"
	"github.com/shuffledp/shuffledp/shard"
)

// chunkReports is the number of reports per Submit message.
const chunkReports = 512

// ClientPoolConfig configures a ClientPool.
type ClientPoolConfig struct {
	// Shuffler and Server are the addresses to dial; TLS is the client
	// bundle's configuration (pki.ClientTLS with role client): each
	// connection accepts only the role it dials.
	Shuffler string `flag:"shuffler" metavar:"ADDR" usage:"the shuffler's ADDR"`
	Server   string `flag:"server" metavar:"ADDR" usage:"the server's ADDR (for the run specification and key configs)"`
	TLS      *tls.Config
	// Credentials are the pool's clients' credentials; the pool hosts
	// clients [Lo, Hi) of them (both 0: all of them).
	Credentials *pki.Credentials
	Lo, Hi      int64
	// DataDir holds the data set the run names (mnist); unused for
	// synthetic data.
	DataDir string `flag:"data-dir" metavar:"DIR" usage:"DIR holding the run's data set (mnist); not needed for synthetic"`
	// Workers is the number of goroutines computing reports (>= 1).
	Workers int `flag:"workers" default:"1" usage:"goroutines computing reports"`
	// Dropout is a SIMULATION of unreliable devices: each sampled client
	// ignores a round with this probability (an independent coin from
	// crypto/rand per client and round), so the shuffler puts a dummy in
	// its place at the deadline (under check-in: each client the shuffler
	// selected). 0: none.
	Dropout float64 `flag:"dropout" metavar:"P" usage:"SIMULATION of unreliable devices: each sampled client ignores a round with probability P (coins from crypto/rand); the shuffler puts a dummy in its place at the deadline"`
	// Update, if not nil, computes each client's update in place of
	// model.Worker's gradient (the Python API's client function): the
	// pool then serves runs of the external model only (model.External),
	// loads no data set (but for the labels of a partition that deals by
	// label, dirichlet or shards: DataDir's), and puts what Update returns
	// through the same clip, randomizer and seal
	// (client.Client.ReportUpdate). Update receives one client's index,
	// the indices of the examples the run's partition deals it (the
	// Dataset's examples per client and partition, as ClientAssignment
	// deals them to Go clients) and the round's published parameters
	// (read-only) and writes that client's update; it is called for the
	// pool's sampled clients only, one at a time per worker, and sees
	// nothing of any other client.
	Update UpdateFunc
	// Log receives a line per round (nil: none).
	Log *log.Logger
	// ConnectTimeout bounds every wait for a peer: for the server and the
	// shuffler to answer at start, for the shuffler to accept the
	// registration, and for it to come back after it went away mid-run
	// (0: DefaultConnectTimeout). Past it Run fails, naming the peer.
	ConnectTimeout time.Duration `flag:"connect-timeout" default:"1m" usage:"how long to wait for the server and the shuffler to answer (and to accept the registration), at start and after the shuffler went away mid-run; then exit 1 naming what was waited for"`
}

// UpdateFunc computes client's update over its examples (their indices
// in the population) at the round's parameters params into update (both of
// the run's dimension); it must not keep the slices.
type UpdateFunc func(client int64, examples []int, params, update []float64) error

// ClientPool hosts many simulated clients in one process: it fetches the
// run specification and the key configs from the server, registers its
// clients with the shuffler, and for every round in which some of them are
// sampled computes their reports with client.Client (gradient, clip,
// randomize with noise from crypto/rand, seal with HPKE to the server's
// key) and streams them to the shuffler.
type ClientPool struct {
	cfg     ClientPoolConfig
	reports atomic.Int64
	dropped atomic.Int64
}

// NewClientPool checks cfg and returns a pool.
func NewClientPool(cfg ClientPoolConfig) (*ClientPool, error) {
	if cfg.TLS == nil {
		return nil, errors.New("client: a TLS configuration is required")
	}
	if cfg.Credentials == nil {
		return nil, errors.New("client: credentials are required")
	}
	if cfg.Lo == 0 && cfg.Hi == 0 {
		cfg.Lo, cfg.Hi = cfg.Credentials.Lo, cfg.Credentials.Hi
	}
	if cfg.Lo < cfg.Credentials.Lo || cfg.Hi > cfg.Credentials.Hi || cfg.Lo >= cfg.Hi {
		return nil, fmt.Errorf("clients %d:%d: the credentials hold clients %d:%d", cfg.Lo, cfg.Hi, cfg.Credentials.Lo, cfg.Credentials.Hi)
	}
	if cfg.Workers < 1 {
		return nil, fmt.Errorf("workers must be >= 1, got %d", cfg.Workers)
	}
	if cfg.ConnectTimeout < 0 {
		return nil, fmt.Errorf("connect-timeout must be >= 0, got %v", cfg.ConnectTimeout)
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = DefaultConnectTimeout
	}
	if err := CheckOwnCertificates("client", cfg.TLS, time.Now()); err != nil {
		return nil, err
	}
	if !(cfg.Dropout >= 0 && cfg.Dropout <= 1) {
		return nil, fmt.Errorf("dropout must be in [0, 1], got %g", cfg.Dropout)
	}
	return &ClientPool{cfg: cfg}, nil
}

// Reports returns the number of reports the pool has submitted.
func (p *ClientPool) Reports() int64 { return p.reports.Load() }

func (p *ClientPool) logf(format string, args ...any) {
	if p.cfg.Log != nil {
		p.cfg.Log.Printf(format, args...)
	}
}

// poolWorker is one goroutine's client and noise.
type poolWorker struct {
	c     *client.Client
	noise randomizer.Source
	// data is its view of the client it computes (LoadClientData); update
	// holds a client's update instead (ClientPoolConfig.Update; nil
	// without).
	data   poolExamples
	update []float64
	// asg and examples: the assignment and a client's examples, for
	// Update.
	asg      data.Assignment
	examples []int
}

// report computes client c's sealed report for round: its update
// (ClientPoolConfig.Update) or its update over its own examples
// (client.Client.ReportExamples).
func (p *ClientPool) report(w *poolWorker, round *protocol.Round, c int64) ([]byte, error) {
	if w.update != nil {
		clear(w.update)
		w.examples = w.asg.Examples(int(c), w.examples[:0])
		if err := p.cfg.Update(c, w.examples, round.Model.Params, w.update); err != nil {
			return nil, err
		}
		return w.c.ReportUpdate(round, w.update, w.noise)
	}
	sealed, _, err := w.c.ReportExamples(round, w.data.of(int(c)), w.noise)
	return sealed, err
}

// Run serves the pool's clients until the shuffler says the run is over
// (nil) or ctx is cancelled (nil). Every wait for a peer is bounded by
// ConnectTimeout: a server or shuffler that does not answer, presents a
// certificate of another authority or an expired one, or a shuffler that
// goes away mid-run and does not come back in time, is an error naming the
// peer and the cause. Only the shuffler's explicit word that the run is
// finished ends Run with nil.
func (p *ClientPool) Run(ctx context.Context) error {
	timeout := p.cfg.ConnectTimeout
	if err := waitReachable(ctx, pki.RoleServer, p.cfg.Server, p.cfg.TLS, timeout); err != nil {
		return p.waitErr(ctx, err)
	}
	sconn, err := dial(p.cfg.Server, p.cfg.TLS, pki.RoleServer)
	if err != nil {
		return err
	}
	srv := pb.NewServerClient(sconn)
	getRun := func() (*pb.RunSpec, error) {
		gctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		return srv.GetRun(gctx, &pb.GetRunRequest{}, grpc.WaitForReady(true))
	}
	spec, err := getRun()
	// The pool never calls the server again (see workersFor): the
	// connection is closed now rather than holding one of the server's
	// connection slots for the whole run.
	sconn.Close()
	if err != nil {
		return fmt.Errorf("client: run spec from the server %s: %w", p.cfg.Server, err)
	}
	run, err := runConfigFromPB(spec.Config)
	if err != nil {
		return err
	}
	keys, err := keyConfigs(spec)
	if err != nil {
		return err
	}
	if p.cfg.Hi > int64(run.Population) {
		return fmt.Errorf("clients %d:%d: the run has %d clients", p.cfg.Lo, p.cfg.Hi, run.Population)
	}
	external := run.Model == model.ExternalName
	switch {
	case external && p.cfg.Update == nil:
		return errors.New("client: the run's model is external (its arithmetic is the caller's, the Python API's): its clients need an update function, which `shuffledp client` does not have (docs/python-federated.md)")
	case !external && p.cfg.Update != nil:
		return fmt.Errorf("client: an update function serves a run of the external model; this run's model is %s", run.Model)
	}
	var (
		ds           data.Source
		dim, classes int
	)
	if !external {
		if ds, err = LoadClientData(spec.Dataset, p.cfg.DataDir, run.Population); err != nil {
			return err
		}
		dim, classes = ds.Shape()
	}
	var asg data.Assignment
	if !external {
		asg, err = ClientAssignment(spec.Dataset, ds, run.Population)
	} else {
		asg, err = externalAssignment(spec.Dataset, p.cfg.DataDir, run.Population)
	}
	if err != nil {
		return err
	}
	workers := map[uint8][]*poolWorker{} // by key id: a client.Client seals to one key
	workersRun := map[uint8]string{}     // the run id workers[id] seal to
	sealers := map[uint8]*protocol.HPKESealer{}
	// workersFor returns the clients sealing to key id and the run id bind
	// (checkBindRun: the run's, or the shard's in a sharded run; a pool's
	// clients are of one shard, so they are built again at most once).
	workersFor := func(id uint8, bind string) ([]*poolWorker, error) {
		if ws := workers[id]; ws != nil && workersRun[id] == bind {
			return ws, nil
		}
		kc, ok := keys[id]
		if !ok {
			// Never ask the server now: only a pool with a client sampled
			// in this round would ask, so the server would learn which
			// pools were sampled (and it can cause exactly that, by
			// publishing the key to the shuffler and not to the clients).
			return nil, fmt.Errorf("key id %d is not in the run specification the server published to this client at start; refusing the round (asking the server now would tell it this client was sampled)", id)
		}
		sealer := sealers[id]
		if sealer == nil {
			var err error
			if sealer, err = protocol.NewHPKESealer(kc, run.ReportBytes-protocol.HPKEOverhead); err != nil {
				return nil, err
			}
			sealers[id] = sealer
		}
		bound := run
		bound.Run = bind
		ws := make([]*poolWorker, p.cfg.Workers)
		for i := range ws {
			var m model.Model
			var err error
			if external {
				m, err = model.NewExternal(make([]float64, run.Dim))
			} else {
				m, err = model.New(run.Model, dim, classes)
			}
			if err != nil {
				return nil, err
			}
			c, err := client.New(bound, m, sealer)
			if err != nil {
				return nil, err
			}
			ws[i] = &poolWorker{c: c, noise: randomizer.NewCryptoSource()}
			if external {
				ws[i].update, ws[i].asg = make([]float64, run.Dim), asg
			} else {
				ws[i].data = newPoolExamples(ds, asg)
			}
		}
		workers[id], workersRun[id] = ws, bind
		return ws, nil
	}
	coin := randomizer.NewCryptoSource() // --dropout's coins
	for id := range keys {               // build the clients early, to check model and data
		if _, err := workersFor(id, run.Run); err != nil {
			return err
		}
		break
	}

	if err := waitReachable(ctx, pki.RoleShuffler, p.cfg.Shuffler, p.cfg.TLS, timeout); err != nil {
		return p.waitErr(ctx, err)
	}
	conn, err := dial(p.cfg.Shuffler, p.cfg.TLS, pki.RoleShuffler)
	if err != nil {
		return err
	}
	defer conn.Close()
	shuf := pb.NewShufflerClient(conn)
	// Between rounds the pool sets up, for the key of the last round, as
	// many HPKE sender contexts as it sent reports then (the KEM half of
	// HPKE, independent of the report and the round: HPKESealer.Precompute),
	// so that the next round's seals do only the AEAD encryption: the
	// idle time of a device between rounds. One background goroutine at a
	// time; Run stops it and waits for it before returning.
	var precomputing atomic.Bool
	var background sync.WaitGroup
	defer background.Wait()
	bgCtx, bgCancel := context.WithCancel(ctx)
	defer bgCancel() // runs before the Wait: a precomputation stops when Run returns
	precompute := func(s *protocol.HPKESealer, want int) {
		if s == nil || want <= 0 || !precomputing.CompareAndSwap(false, true) {
			return
		}
		background.Add(1)
		go func() {
			defer background.Done()
			defer precomputing.Store(false)
			for bgCtx.Err() == nil {
				have := s.Precomputed()
				if have >= want {
					return
				}
				if _, err := s.Precompute(min(64, want-have)); err != nil {
					return // Seal sets up its own context, and reports the error
				}
			}
		}()
	}
	// Before the first round: the pool's expected share of a round
	// (k (HI-LO) / n clients of a sampled run), so that the first round's
	// seals are as cheap as the later ones'.
	if run.Participation != protocol.ParticipationCheckIn && run.Population > 0 {
		for _, s := range sealers {
			precompute(s, int(math.Ceil(float64(run.PerRound)*float64(p.cfg.Hi-p.cfg.Lo)/float64(run.Population))))
		}
	}
	var (
		work    workStream
		endWork = func() {} // releases work's stream
		lostAt  time.Time   // when the shuffler went away (zero: it has not)
	)
	defer func() { endWork() }()
	for {
		if work == nil {
			endWork()
			var finished bool
			work, endWork, finished, err = p.register(ctx, shuf, run.Run, grpc.MaxCallRecvMsgSize(modelLimit(run)))
			switch {
			case finished:
				p.logf("the shuffler says the run is finished")
				return nil
			case err != nil && ctx.Err() != nil:
				return nil
			case err != nil && shufflerLost(err):
				// Not an answer: the shuffler went away (or is not back yet).
				if err := p.reconnect(ctx, err, &lostAt); err != nil {
					return err
				}
				continue
			case err != nil:
				return err
			}
			lostAt = time.Time{}
		}
		a, err := work.Recv()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if !shufflerLost(err) {
				return fmt.Errorf("client: shuffler stream: %w", err)
			}
			if err := p.reconnect(ctx, err, &lostAt); err != nil {
				return err
			}
			work = nil
			continue
		}
		if a.Finished {
			p.logf("the shuffler finished the run")
			return nil
		}
		if a.Model == nil || a.Model.KeyId > 255 {
			return errors.New("client: assignment without a model")
		}
		// The shuffler debits its ledger for the configuration it relays;
		// the clients randomize with the one the server published. An
		// untrusted server that told them apart (weaker noise for the
		// clients than the shuffler accounts for) is caught here, before
		// any report is computed.
		if diff := sameRunConfig(spec.Config, a.Config); diff != "" {
			return fmt.Errorf("client: round %d: the run configuration the shuffler accounts for differs from the server's in %s; refusing to report", a.Round, diff)
		}
		if err := checkBindRun(run, a.Model.Run, a.Clients); err != nil {
			return fmt.Errorf("client: round %d: %w; refusing to report", a.Round, err)
		}
		ws, err := workersFor(uint8(a.Model.KeyId), a.Model.Run)
		if err != nil {
			p.logf("round %d refused: %v", a.Round, err)
			continue
		}
		round := protocol.Round{ID: a.Round, Model: protocol.Model{Run: a.Model.Run, Version: a.Model.Version, Params: a.Model.Params}}
		// a.Clients are the clients the shuffler sampled (under check-in:
		// selected by its coins); each reports.
		clients := a.Clients
		if p.cfg.Dropout > 0 {
			if clients, err = p.dropout(clients, coin); err != nil {
				return err
			}
			if len(clients) == 0 {
				continue
			}
		}
		if err := p.serve(ctx, shuf, ws, run, &round, clients); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if !shufflerLost(err) {
				return err
			}
			if err := p.reconnect(ctx, err, &lostAt); err != nil {
				return err
			}
			work = nil
			continue
		}
		precompute(sealers[uint8(a.Model.KeyId)], len(clients))
	}
}

// registeredKey is the header the shuffler sends once it has accepted a
// Work registration (every credential checked): its value is the number
// of clients registered. A stream that ends without it was refused.
const registeredKey = "shuffledp-registered"

// register opens a Work stream for the pool's clients in run, sends their
// credentials (sendRegistration: in messages of registerChunk clients,
// built from the pool's range as they are sent, so nothing of the
// registration is kept between registrations) and waits, at most
// ConnectTimeout, for the shuffler to accept it (its registeredKey
// header) or say the run is finished. Only an accepted registration is
// logged as one; a refusal is an error carrying the shuffler's status.
func (p *ClientPool) register(ctx context.Context, shuf pb.ShufflerClient, run string, opts ...grpc.CallOption) (workStream, func(), bool, error) {
	sctx, cancel := context.WithCancelCause(ctx)
	late := errors.New("no answer to the registration")
	timer := time.AfterFunc(p.cfg.ConnectTimeout, func() { cancel(late) })
	defer timer.Stop()
	none := func() {}
	fail := func(err error) (workStream, func(), bool, error) {
		cancel(nil)
		if errors.Is(context.Cause(sctx), late) {
			return nil, none, false, &PeerError{Peer: "the shuffler", Addr: p.cfg.Shuffler, Waited: p.cfg.ConnectTimeout,
				Err: fmt.Errorf("registration of clients %d:%d not accepted", p.cfg.Lo, p.cfg.Hi)}
		}
		return nil, none, false, err
	}
	work, err := sendRegistration(p.credential(sctx), shuf, run, p.cfg.Lo, p.cfg.Hi, registerChunk, p.cfg.Credentials.Token, append(opts, grpc.WaitForReady(true))...)
	if err != nil {
		return fail(fmt.Errorf("client: shuffler %s: %w", p.cfg.Shuffler, err))
	}
	md, err := work.Header()
	if err != nil {
		return fail(fmt.Errorf("client: shuffler %s: %w", p.cfg.Shuffler, err))
	}
	if len(md.Get(registeredKey)) == 0 {
		// No acceptance: the stream carries the shuffler's answer.
		a, err := work.Recv()
		if err == nil && a.Finished {
			cancel(nil)
			return nil, none, true, nil
		}
		if err == nil {
			err = errors.New("an assignment before the registration was accepted")
		}
		if shufflerLost(err) {
			return fail(fmt.Errorf("client: shuffler %s: %w", p.cfg.Shuffler, err))
		}
		return fail(fmt.Errorf("client: the shuffler %s refused the registration of clients %d:%d: %w", p.cfg.Shuffler, p.cfg.Lo, p.cfg.Hi, err))
	}
	if !timer.Stop() {
		return fail(nil)
	}
	p.logf("clients %d:%d registered with the shuffler for run %s", p.cfg.Lo, p.cfg.Hi, run)
	// The stream lives until the run ends, the shuffler goes away or the
	// caller replaces it.
	return work, func() { cancel(nil) }, false, nil
}

// reconnect waits for the shuffler to answer again after it went away
// mid-run (cause), at most ConnectTimeout after *lostAt (set now if zero):
// however often it comes and goes, the run is abandoned once it has been
// away that long. Its error says the shuffler went away before the run
// finished.
func (p *ClientPool) reconnect(ctx context.Context, cause error, lostAt *time.Time) error {
	if lostAt.IsZero() {
		*lostAt = time.Now()
		p.logf("lost the shuffler at %s before the run finished (%v); reconnecting for up to %v", p.cfg.Shuffler, cause, p.cfg.ConnectTimeout)
	}
	left := p.cfg.ConnectTimeout - time.Since(*lostAt)
	err := error(&PeerError{Peer: "the shuffler", Addr: p.cfg.Shuffler, Waited: time.Since(*lostAt), Err: cause})
	if left > 0 {
		err = waitReachable(ctx, pki.RoleShuffler, p.cfg.Shuffler, p.cfg.TLS, left)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("client: the shuffler went away before the run finished: %w", err)
	}
	return nil
}

// waitErr is Run's result for a failed wait for a peer: nil if ctx was
// cancelled (the caller reports the interruption), err otherwise.
func (p *ClientPool) waitErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return fmt.Errorf("client: %w", err)
}

// shufflerLost reports whether err means the peer went away or cannot be
// reached (codes.Unavailable), rather than an answer.
func shufflerLost(err error) bool {
	st, ok := status.FromError(err)
	return ok && st.Code() == codes.Unavailable
}

// dropout keeps each client with probability 1 - Dropout (simulation of
// unreliable devices; coins from crypto/rand).
func (p *ClientPool) dropout(clients []int64, coin randomizer.Source) ([]int64, error) {
	var kept []int64
	for _, c := range clients {
		if p.cfg.Dropout < 1 && !randomizer.Bernoulli(coin, uint64(math.Ldexp(p.cfg.Dropout, 64))) {
			kept = append(kept, c)
		}
	}
	if n := len(clients) - len(kept); n > 0 {
		p.dropped.Add(int64(n))
	}
	return kept, nil
}

// Dropped returns how many sampled clients the --dropout simulation made
// ignore their round.
func (p *ClientPool) Dropped() int64 { return p.dropped.Load() }

// credential adds the credential of the pool's first client to a call's
// metadata: the shuffler reads no message of a Work or Submit call without
// one.
func (p *ClientPool) credential(ctx context.Context) context.Context {
	return withCredential(ctx, p.cfg.Lo, p.cfg.Credentials.Token(p.cfg.Lo))
}

// chunkLinger is how long a partial chunk waits for more reports while
// the clients compute (sendChunks). At 10 ms a pool of two workers sent a
// round of 10,000 in 100 to 500 chunks of 20 to 100 reports (the rounds
// lasting 1 to 5 s on a loaded machine), and each chunk cost the shuffler
// a message's receive and wake-ups; at 100 ms, 10 to 50 chunks. The last
// chunk goes when the pool's clients are done, so the linger delays no
// round that waits for every report; a round released at its deadline
// (--round-timeout, minutes) loses at most the linger's worth of a slow
// pool's reports, as dropouts.
const chunkLinger = 100 * time.Millisecond

// sendChunks sends the reports of out, in order, in ReportChunks of run
// and round: a chunk goes when it holds chunkReports reports, or when no
// report is waiting and linger has passed since the last send, and the
// rest when out is closed. Reports come one by one as the clients compute
// them; sending whatever is there whenever out is momentarily empty made
// about one message per report (10,000 a round at k = 10,000), and the
// shuffler paid a gRPC message's receive, TLS record and wake-up for
// each. After a failed send the rest is drained, not sent; the first
// error is returned.
func sendChunks(out <-chan *pb.Report, run string, round int64, send func(*pb.ReportChunk) error, linger time.Duration) error {
	var err error
	chunk := &pb.ReportChunk{Run: run, Round: round}
	last := time.Now()
	flush := func() {
		if err == nil {
			err = send(chunk)
		}
		chunk = &pb.ReportChunk{Run: run, Round: round}
		last = time.Now()
	}
	for r := range out {
		chunk.Reports = append(chunk.Reports, r)
		if len(chunk.Reports) == chunkReports || (len(out) == 0 && time.Since(last) >= linger) {
			flush()
		}
	}
	if len(chunk.Reports) > 0 {
		flush()
	}
	return err
}

// serve computes the reports of the round's sampled (under check-in:
// selected) clients in parallel and streams them to the shuffler in chunks
// as they are ready.
func (p *ClientPool) serve(ctx context.Context, shuf pb.ShufflerClient, ws []*poolWorker, run protocol.RunConfig, round *protocol.Round, clients []int64) error {
	for _, c := range clients {
		if c < p.cfg.Lo || c >= p.cfg.Hi {
			return fmt.Errorf("client: assigned client %d outside %d:%d", c, p.cfg.Lo, p.cfg.Hi)
		}
	}
	// The Submit stream opens when the first chunk is ready, not before
	// the clients compute: the shuffler bounds the wait for a stream's
	// first message (DefaultFirstMessage), and a client's update may take
	// longer than that (a slow model, a busy device, the first call of a
	// Python update function that loads its data).
	var stream pb.Shuffler_SubmitClient
	send := func(c *pb.ReportChunk) error {
		if stream == nil {
			s, err := shuf.Submit(p.credential(ctx))
			if err != nil {
				return err
			}
			stream = s
		}
		return stream.Send(c)
	}
	out := make(chan *pb.Report, 2*chunkReports)
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, len(ws))
	for i, w := range ws[:min(len(ws), len(clients))] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				j := int(next.Add(1) - 1)
				if j >= len(clients) {
					return
				}
				c := clients[j]
				sealed, err := p.report(w, round, c)
				if err != nil {
					errs[i] = fmt.Errorf("client %d: %w", c, err)
					return
				}
				out <- &pb.Report{Client: c, Token: p.cfg.Credentials.Token(c), Sealed: sealed}
			}
		}()
	}
	go func() { wg.Wait(); close(out) }()
	sendErr := sendChunks(out, run.Run, round.ID, send, chunkLinger)
	if err := errors.Join(errs...); err != nil {
		if stream != nil {
			stream.CloseSend()
		}
		return err
	}
	if stream == nil { // nothing sent: the open failed, or no report
		if sendErr != nil {
			return fmt.Errorf("client: submit: %w", sendErr)
		}
		return nil
	}
	ack, err := stream.CloseAndRecv()
	if sendErr != nil && sendErr != io.EOF {
		err = errors.Join(sendErr, err)
	}
	if err != nil {
		return fmt.Errorf("client: round %d submit: %w", round.ID, err)
	}
	p.reports.Add(ack.Accepted)
	if len(ack.Rejected) > 0 {
		p.logf("round %d: %d reports accepted, rejected %v", round.ID, ack.Accepted, ack.Rejected)
	}
	return nil
}

// LoadClientData returns the training set a run names, of which the
// clients hold the first clients*M (the Dataset's examples_per_client M;
// by default client i holds example i): MNIST from dir, or the synthetic
// set of the run's seed, whose examples are generated when a round asks
// for them (data.SyntheticSource: each depends only on the seed and its
// index, so a pool generates exactly what any other process would for its
// clients, and holds none of the population's examples in memory).
func LoadClientData(d *pb.Dataset, dir string, clients int) (data.Source, error) {
	var (
		ds  data.Source
		err error
	)
	m, _, err := datasetPartition(d, clients)
	if err != nil {
		return nil, err
	}
	population := clients * m
	switch d.GetName() {
	case "mnist":
		if dir == "" {
			return nil, errors.New("data-dir is required: the run trains on mnist (`shuffledp data fetch mnist` stores it in " + data.DefaultMNISTDir + ": --data-dir " + data.DefaultMNISTDir + ")")
		}
		ds, _, err = data.LoadMNIST(dir)
	case "synthetic":
		ds = data.SyntheticSource{N: max(population, 1), Seed: d.GetSeed()}
	default:
		return nil, fmt.Errorf("the run names dataset %q; this client knows mnist and synthetic", d.GetName())
	}
	if err != nil {
		return nil, err
	}
	if ds.Len() < population {
		if m > 1 {
			return nil, fmt.Errorf("the run has %d clients of %d examples, the data set %d examples", clients, m, ds.Len())
		}
		return nil, fmt.Errorf("the run has %d clients, the data set %d examples", clients, ds.Len())
	}
	return ds, nil
}

// datasetPartition returns the Dataset's examples per client (at least 1)
// and partition, checked for clients.
func datasetPartition(d *pb.Dataset, clients int) (int, data.Partition, error) {
	m := d.GetExamplesPerClient()
	if m < 0 || m > data.MaxPopulation {
		return 0, data.Partition{}, fmt.Errorf("the run names %d examples per client", m)
	}
	p, err := data.ParsePartition(d.GetPartition())
	if err != nil {
		return 0, data.Partition{}, fmt.Errorf("the run names a bad partition: %w", err)
	}
	if err := p.Check(clients, max(int(m), 1)); err != nil {
		return 0, data.Partition{}, fmt.Errorf("the run's data: %w", err)
	}
	return max(int(m), 1), p, nil
}

// ClientAssignment deals the population of ds (LoadClientData's) to the
// run's clients by the Dataset's partition, seeded by its seed: the
// simulation's assignment (training.Config's), computed from the
// population's labels alone (data.Source.Label) where the partition reads
// labels, and from nothing but the seed otherwise.
func ClientAssignment(d *pb.Dataset, ds data.Source, clients int) (data.Assignment, error) {
	m, p, err := datasetPartition(d, clients)
	if err != nil {
		return data.Assignment{}, err
	}
	_, classes := ds.Shape()
	return p.Assign(clients, m, classes, ds.Label, d.GetSeed())
}

// externalAssignment is ClientAssignment for an external run's pool,
// which holds no data set: the partitions that do not read labels (index,
// iid) deal from the seed alone; dirichlet and shards read the labels of
// the data set the run names (synthetic, or mnist from dir).
func externalAssignment(d *pb.Dataset, dir string, clients int) (data.Assignment, error) {
	m, part, err := datasetPartition(d, clients)
	if err != nil {
		return data.Assignment{}, err
	}
	if !part.NeedsLabels() {
		return part.Assign(clients, m, 0, nil, d.GetSeed())
	}
	ds, err := LoadClientData(d, dir, clients)
	if err != nil {
		return data.Assignment{}, fmt.Errorf("client: partition %s deals by label, read from the run's data set: %w", part, err)
	}
	return ClientAssignment(d, ds, clients)
}

// poolExamples is a pool worker's view of one client's examples: the
// indices the assignment deals it and, for a generated source, a buffer
// per example.
type poolExamples struct {
	src  data.Source
	asg  data.Assignment
	idx  []int
	bufs [][]float64
	exs  []client.Example
}

func newPoolExamples(src data.Source, asg data.Assignment) poolExamples {
	dim, _ := src.Shape()
	e := poolExamples{src: src, asg: asg, bufs: make([][]float64, asg.PerClient)}
	for j := range e.bufs {
		e.bufs[j] = make([]float64, dim)
	}
	return e
}

// of returns client c's examples, valid until the next call.
func (e *poolExamples) of(c int) []client.Example {
	e.idx = e.asg.Examples(c, e.idx[:0])
	e.exs = e.exs[:0]
	for j, i := range e.idx {
		x, label := e.src.At(i, e.bufs[j])
		e.exs = append(e.exs, client.Example{X: x, Label: label})
	}
	return e.exs
}

// checkBindRun checks the run id a shuffler relays with a round, to which
// the round's sampled clients seal their reports: the run's own id, or the
// ledger run id of a shard of the run (shard.RunID) whose clients
// (shard.ClientRange of the run's population) include every one of
// clients. A report sealed to a shard's run id opens at the server only in
// that shard's batch, so a report released by one shard's batch cannot be
// replayed through another shard's.
func checkBindRun(run protocol.RunConfig, bind string, clients []int64) error {
	r, i, shards, err := shard.ParseRunID(bind)
	if err != nil || r != run.Run {
		return fmt.Errorf("the shuffler relays the model of run %q, not of the run %q or one of its shards", bind, run.Run)
	}
	if shards == 1 {
		return nil
	}
	if shards > run.Population {
		return fmt.Errorf("the shuffler relays the model of shard %q: %d shards of a run of %d clients", bind, shards, run.Population)
	}
	lo, hi := shard.ClientRange(int64(run.Population), shards, i)
	for _, c := range clients {
		if c < lo || c >= hi {
			return fmt.Errorf("the shuffler relays the model of shard %q (clients %d..%d) to client %d", bind, lo, hi-1, c)
		}
	}
	return nil
}
