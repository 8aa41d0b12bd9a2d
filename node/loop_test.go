package node

import (
	"context"
	"errors"

	"github.com/shuffledp/shuffledp/data"
	"github.com/shuffledp/shuffledp/metrics"
	"github.com/shuffledp/shuffledp/model"
	"github.com/shuffledp/shuffledp/statedir"
	"github.com/shuffledp/shuffledp/training"
)

// serverLoop is a server process in a test, wired as `shuffledp server`
// wires it: the training loop (a training.Trainer built WithRemote over the
// node, in a session of the node's state directory) and the node, its
// transport.
type serverLoop struct {
	srv     *Server
	session *statedir.Session
	tr      *training.Trainer
}

// newServerLoop opens the session in scfg.Dir, the node, and the loop for
// m and the test set; the node publishes the run.
func newServerLoop(ctx context.Context, cfg training.Config, scfg ServerConfig, m model.Model, test *data.Dataset, extra ...training.Option) (_ *serverLoop, err error) {
	if err := cfg.CheckNetworked(); err != nil {
		return nil, err
	}
	l := &serverLoop{}
	if l.session, err = training.OpenSession(ctx, statedir.SessionConfig{Dir: scfg.Dir}, &cfg); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			l.Close()
		}
	}()
	scfg.Delta, scfg.TargetEpsilon = cfg.Delta, cfg.TargetEpsilon
	if sl := l.session.Ledger(); sl != nil {
		scfg.Received = sl // as deploy.OpenServer wires it
	}
	if l.srv, err = NewServer(scfg); err != nil {
		return nil, err
	}
	rsize, err := cfg.ReportSize(m.NumParams())
	if err != nil {
		return nil, err
	}
	sealer, opener, err := l.srv.Sealing(rsize)
	if err != nil {
		return nil, err
	}
	opts := append(append(training.SessionOptions(l.session), training.WithRemote(l.srv), training.WithSealing(sealer, opener)), extra...)
	if l.tr, err = training.New(cfg, m, nil, test, opts...); err != nil {
		return nil, err
	}
	if _, err := l.tr.Resume(l.session); err != nil {
		return nil, err
	}
	return l, l.srv.Publish(l.tr.RunConfig())
}

// train runs the loop through the session until it stops, reporting rounds
// and evaluations to the node's metrics, then tells the shuffler the run is
// finished.
func (l *serverLoop) train(ctx context.Context, hooks training.Hooks) (training.StopReason, error) {
	stop := context.AfterFunc(ctx, l.srv.Interrupt)
	defer stop()
	onRound, onEval := hooks.OnRound, hooks.OnEval
	hooks.OnRound = func(r training.RoundStats) error {
		l.srv.RoundApplied(r.Reports, r.Refused)
		if onRound != nil {
			return onRound(r)
		}
		return nil
	}
	hooks.OnEval = func(r metrics.Record) error {
		l.srv.Evaluated(r.TestAccuracy, r.TestAccuracyEMA)
		if onEval != nil {
			return onEval(r)
		}
		return nil
	}
	reason, err := l.tr.RunSession(ctx, l.session, hooks)
	if errors.Is(err, ErrStopped) {
		reason, err = training.StopCancelled, nil
	}
	l.srv.Finish()
	return reason, err
}

// Close closes the node, then the session.
func (l *serverLoop) Close() error {
	var errs []error
	if l.srv != nil {
		errs = append(errs, l.srv.Close())
	}
	if l.session != nil {
		errs = append(errs, l.session.Close())
	}
	return errors.Join(errs...)
}
