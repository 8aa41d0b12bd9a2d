package deploy

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/shuffledp/shuffledp/dashboard"
	"github.com/shuffledp/shuffledp/data"
	"github.com/shuffledp/shuffledp/metrics"
	"github.com/shuffledp/shuffledp/model"
	"github.com/shuffledp/shuffledp/node"
	"github.com/shuffledp/shuffledp/pki"
	"github.com/shuffledp/shuffledp/server"
	"github.com/shuffledp/shuffledp/statedir"
	"github.com/shuffledp/shuffledp/training"
)

// CheckServerOptions refuses, before anything else is looked at, the
// train options a server process cannot run with: it needs its state
// directory and its PKI bundle, holds no training data to hold out and
// has no client noise to draw. Errors name the flags.
func CheckServerOptions(state, pkiDir string, o training.Options) error {
	switch {
	case state == "":
		return errors.New("state is required: the server's state directory (model checkpoint, metrics, HPKE key)")
	case pkiDir == "":
		return errors.New("pki is required: the server's bundle (DIR/server of `shuffledp pki init --dir DIR`)")
	case o.Validation != 0:
		return errors.New("validation: a networked server holds no training data to hold out")
	case o.CryptoNoise:
		return errors.New("crypto-noise: clients of a networked run always draw their noise from crypto/rand")
	case o.Features != "none" && o.Features != "":
		return errors.New("features: networked clients compute gradients on raw pixels; --features is for train")
	}
	return nil
}

// ServerNode checks that the run cfg may run over the network
// (training.Config.CheckNetworked) and returns the server node's
// configuration but for its directory, delta, target and metrics: the
// public dataset name, seed, examples per client and partition (the last
// two only where they differ from one example a client, client i holding
// example i), and the TLS configuration of the bundle pkiDir, whose
// certificates must be valid now.
func ServerNode(cfg training.Config, o training.Options, pkiDir string) (node.ServerConfig, error) {
	var ncfg node.ServerConfig
	if err := cfg.CheckNetworked(); err != nil {
		return ncfg, err
	}
	ncfg.Dataset = node.Dataset{Name: o.Dataset, Seed: o.Seed}
	if cfg.ExamplesPerClient > 1 { // at the defaults the run specification is what it always was
		ncfg.Dataset.ExamplesPerClient = cfg.ExamplesPerClient
	}
	if k := cfg.Partition.Kind; k != "" && k != data.PartitionIndex {
		ncfg.Dataset.Partition = cfg.Partition.String()
	}
	if err := ncfg.Dataset.Validate(); err != nil {
		return ncfg, err
	}
	var err error
	if ncfg.TLS, err = pki.ServerTLS(pkiDir, pki.RoleServer); err != nil {
		return ncfg, err
	}
	return ncfg, node.CheckOwnCertificates("server", ncfg.TLS, time.Now())
}

// ServerConfig configures OpenServer.
type ServerConfig struct {
	// Options are the run's train options (dataset, model, seed) and
	// Train their validated configuration.
	Options training.Options
	Train   training.Config
	// State is the state directory, Metrics the metrics file ("": the
	// state directory's), Flags the run's identity in it.
	State, Metrics string
	Flags          map[string]string
	// Node is the node's configuration (ServerNode's, with Metrics if
	// wanted); its directory, delta and target are the session's.
	Node node.ServerConfig
	// External, if not nil, makes the model the caller's (the Python
	// API's server, docs/python-federated.md): no data set is loaded, the
	// parameters start at its Theta0 (or the checkpoint's), its Update
	// steps and its Evaluate evaluates.
	External *External
}

// External is a server's model whose arithmetic is the caller's
// (model.External).
type External struct {
	// Theta0 is the initial parameter vector (its length is the run's
	// dimension).
	Theta0 []float64
	// Update is the server's step on each round's released mean;
	// Evaluate, if not nil, evaluates the parameters at each evaluation.
	Update   server.Update
	Evaluate training.Evaluator
}

// Server is the server process: its state directory, the node (its
// transport) and its training loop.
type Server struct {
	Session *statedir.Session
	Node    *node.Server
	Trainer *training.Trainer
	// Done is the number of rounds the checkpoint had completed.
	Done int
	// Board is the server's live page (the node configuration's
	// Dashboard; nil: none): Run feeds it every round and evaluation.
	Board *dashboard.ServerBoard
}

// OpenServer opens the state directory (with the run's flags), the node
// in it, the test set and the model (theta_0 from the seed), and the loop
// over the node, restored from the checkpoint; the node then publishes the
// run's configuration. On error everything opened is closed.
func OpenServer(ctx context.Context, c ServerConfig) (_ *Server, err error) {
	s := &Server{}
	cfg := c.Train
	if s.Session, err = training.OpenSession(ctx, statedir.SessionConfig{Dir: c.State, Flags: c.Flags, MayDiffer: training.ResumableFlags, Metrics: c.Metrics}, &cfg); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	ncfg := c.Node
	ncfg.Dir, ncfg.Delta, ncfg.TargetEpsilon, ncfg.Bound = s.Session.Dir(), cfg.Delta, cfg.TargetEpsilon, cfg.Bound
	if l := s.Session.Ledger(); l != nil {
		// The loop records every batch it takes there; the node refuses
		// one that contradicts the record (a second shuffler) and tells
		// the shuffler the last round received.
		ncfg.Received = l
	}
	ncfg.Rounds = int64(cfg.TotalRounds())
	if s.Node, err = node.NewServer(ncfg); err != nil {
		return nil, err
	}
	var (
		m    model.Model
		test *data.Dataset
		opts []training.Option
	)
	if c.External != nil {
		if m, err = model.NewExternal(c.External.Theta0); err != nil {
			return nil, err
		}
		opts = append(opts, training.WithExternal(c.External.Update, c.External.Evaluate))
	} else {
		spec := c.Options.DataSpec()
		spec.TestOnly = true // the clients hold the training examples; the server evaluates only
		if _, test, err = data.Load(spec); err != nil {
			return nil, err
		}
		if m, err = model.New(c.Options.Model, test.Dim, test.Classes); err != nil {
			return nil, err
		}
		m.Init(model.NewInitRNG(c.Options.Seed))
	}
	if s.Trainer, s.Done, err = attachLoop(s.Session, s.Node, cfg, m, test, opts...); err != nil {
		return nil, err
	}
	s.Board = c.Node.Dashboard
	s.configureBoard(c.Metrics)
	return s, nil
}

// Finished reports whether the checkpoint has completed every round of
// the run: there is nothing to serve.
func (s *Server) Finished() bool {
	cfg := s.Trainer.Config()
	return s.Done >= cfg.TotalRounds()
}

// Close closes the node, then the session.
func (s *Server) Close() error {
	var errs []error
	if s.Node != nil {
		errs = append(errs, s.Node.Close())
	}
	if s.Session != nil {
		errs = append(errs, s.Session.Close())
	}
	return errors.Join(errs...)
}

// attachLoop builds the server process's training loop: a trainer whose
// rounds come from the node (training.WithRemote: the node is its
// transport), its reports opened with the node's HPKE key, bound to the
// session and restored from its checkpoint; the node then publishes the
// run's configuration. It returns the rounds the checkpoint had completed.
func attachLoop(session *statedir.Session, srv *node.Server, cfg training.Config, m model.Model, test *data.Dataset, opts ...training.Option) (*training.Trainer, int, error) {
	rsize, err := cfg.ReportSize(m.NumParams())
	if err != nil {
		return nil, 0, err
	}
	sealer, opener, err := srv.Sealing(rsize)
	if err != nil {
		return nil, 0, err
	}
	tr, err := training.New(cfg, m, nil, test, append(append(training.SessionOptions(session), training.WithRemote(srv), training.WithSealing(sealer, opener)), opts...)...)
	if err != nil {
		return nil, 0, err
	}
	done, err := tr.Resume(session)
	if err != nil {
		return nil, 0, err
	}
	return tr, done, srv.Publish(tr.RunConfig())
}

// Run runs the server's loop through its session
// (training.Trainer.RunSession: checkpoint at every evaluation, metrics,
// one more checkpoint at the end) until the run's rounds are done, the
// shuffler reports the budget spent, or ctx is cancelled (StopCancelled,
// after checkpointing: the node interrupts the wait for a batch); the
// node's metrics hear every round and evaluation before hooks do. Then the
// node tells the shuffler the run is finished.
func (s *Server) Run(ctx context.Context, hooks training.Hooks) (training.StopReason, error) {
	stop := context.AfterFunc(ctx, s.Node.Interrupt)
	defer stop()
	onRound, onEval := hooks.OnRound, hooks.OnEval
	last := s.Done // the last evaluated round
	hooks.OnRound = func(r training.RoundStats) error {
		s.Node.RoundApplied(r.Reports, r.Refused)
		s.Board.RoundApplied(r.Round, r.Reports, r.Refused, r.Duration)
		if onRound != nil {
			return onRound(r)
		}
		return nil
	}
	hooks.OnEval = func(r metrics.Record) error {
		s.Node.Evaluated(r.TestAccuracy, r.TestAccuracyEMA)
		s.Node.Spent(r.Epsilon)
		s.Board.Evaluated(r)
		last = r.Round
		if onEval != nil {
			return onEval(r)
		}
		return nil
	}
	reason, err := s.Trainer.RunSession(ctx, s.Session, hooks)
	if errors.Is(err, node.ErrStopped) {
		reason, err = training.StopCancelled, nil
	}
	if err != nil {
		s.Board.Status("failed: " + err.Error())
	} else {
		s.Board.Status(fmt.Sprintf("stopped (%s) after round %d", reason, last))
	}
	s.Node.Finish()
	return reason, err
}
