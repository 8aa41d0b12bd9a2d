package training

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/shuffledp/shuffledp/accounting"
	"github.com/shuffledp/shuffledp/metrics"
	"github.com/shuffledp/shuffledp/protocol"
	"github.com/shuffledp/shuffledp/route"
	"github.com/shuffledp/shuffledp/server"
)

// StopReason says why Run returned.
type StopReason string

const (
	// StopEpochs: all ceil(epochs*n/k) rounds ran.
	StopEpochs StopReason = "epochs"
	// StopTargetEpsilon: the next round would have exceeded --target-epsilon.
	StopTargetEpsilon StopReason = "target-epsilon"
	// StopCancelled: the context was cancelled (e.g. Ctrl-C).
	StopCancelled StopReason = "cancelled"
	// StopRoundsDebited: a networked run's shuffler debited every planned
	// round and stopped the run (protocol.ErrRoundsDebited) before the
	// server applied as many: some batches were debited and never applied
	// (lost to a crash, or refused as computed on a stale model).
	StopRoundsDebited StopReason = "rounds-debited"
)

// Hooks are callbacks of Run; nil ones are skipped. An error returned by a
// hook stops Run with that error.
type Hooks struct {
	// OnRound is called after every round.
	OnRound func(RoundStats) error
	// OnEval is called with every evaluation record.
	OnEval func(metrics.Record) error
}

// evalDue reports whether an evaluation follows the completion of round r
// (counted from 1): every EvalEvery rounds, or at each epoch boundary when
// EvalEvery is 0, and always after the last round.
func (t *Trainer) evalDue(r, total int) bool {
	if r >= total {
		return true
	}
	if t.cfg.EvalEvery > 0 {
		return r%t.cfg.EvalEvery == 0
	}
	return t.cfg.EpochOf(r) != t.cfg.EpochOf(r-1)
}

// Run trains until ceil(Epochs*n/k) rounds have completed (counting rounds
// completed before a resume), the target epsilon would be exceeded, or ctx
// is cancelled. It evaluates at round 0 of a fresh run, then as evalDue
// says, and after the last round it ran.
func (t *Trainer) Run(ctx context.Context, hooks Hooks) (StopReason, error) {
	total := t.cfg.TotalRounds()
	start := time.Now()
	var (
		lossSum       float64
		lossRounds    int
		lastLR        = t.cfg.Schedule().Rate(t.cfg.EpochsDone(max(t.Round()-1, 0)))
		trainTime     time.Duration
		updatesAtEval int64 = t.updates
		evaluated     bool
	)
	eval := func() error {
		e, err := t.evaluateNow()
		if err != nil {
			return err
		}
		rec := metrics.Record{
			Epoch: t.cfg.EpochsDone(t.Round()), Round: t.Round(),
			TestAccuracy: finiteOrNil(e.Accuracy), TestLoss: finiteOrNil(e.Loss),
			Delta: t.cfg.Delta, LR: lastLR,
			WallSeconds: time.Since(start).Seconds(),
			Model:       t.model.Name(), Randomizer: t.cfg.Randomizer, ClipNorm: t.cfg.ClipNorm, ClampLinf: t.cfg.ClampLinf,
			Clip: t.cfg.Clip, Eps0: t.cfg.Eps0, Clients: t.cfg.Clients, Sample: t.cfg.Sample, Seed: t.cfg.Seed,
			Command: t.cfg.Command, EMA: t.cfg.EMA,
		}
		if t.cfg.EvalSet != "test" {
			rec.EvalSet = t.cfg.EvalSet
		}
		if k := t.cfg.Optimizer.Kind(); k != server.OptimizerSGD {
			rec.Optimizer = t.cfg.Optimizer.String()
		}
		if ea, ok := t.EvaluateAveraged(nil); ok {
			rec.TestAccuracyEMA, rec.TestLossEMA = finiteOrNil(ea.Accuracy), finiteOrNil(ea.Loss)
		}
		if t.cfg.Randomizer == RandomizerNone {
			rec.Eps0 = 0
		}
		t.gaussianFields(&rec)       // gaussian.go
		t.cfg.clientDataFields(&rec) // clientdata.go
		if err := t.clipBias(&rec); err != nil {
			return err
		}
		if lossRounds > 0 {
			rec.TrainLoss = finiteOrNil(lossSum / float64(lossRounds))
		}
		if trainTime > 0 {
			rec.ClientUpdatesPerSec = float64(t.updates-updatesAtEval) / trainTime.Seconds()
		}
		if t.ledger != nil {
			// The run's one number: the ledger's statement, computed once per
			// round (ledger.Statement), with the route and bound attaining it.
			st, err := t.ledger.Statement()
			if err != nil {
				return err
			}
			rec.Epsilon, rec.RDPOrder = &st.Epsilon, finiteOrNil(st.Order) // an order only for the RDP route
			lr := t.ledger.Rounds()
			rec.LedgerRounds = &lr
			rec.OrderAtGridEdge, rec.Bound, rec.BoundWinner, rec.Route = st.AtGridEdge, st.Bound, st.Winner, st.Route
			rec.Conjecture, rec.EvaluatedAt = st.Conjecture, st.EvaluatedAt
			if !t.cfg.gaussian() {
				paper, err := route.Epsilon(t.ledger.Events(), accounting.BoundNeurIPS21Upper, t.cfg.Delta, nil)
				if err != nil {
					return fmt.Errorf("epsilon_neurips21: %w", err)
				}
				rec.EpsilonNeurIPS21 = &paper.Epsilon
			}
		}
		lossSum, lossRounds, trainTime, updatesAtEval = 0, 0, 0, t.updates
		evaluated = true
		if hooks.OnEval != nil {
			return hooks.OnEval(rec)
		}
		return nil
	}
	if t.Round() == 0 {
		if err := eval(); err != nil {
			return "", err
		}
	}
	for t.Round() < total {
		if err := ctx.Err(); err != nil {
			if !evaluated {
				if err := eval(); err != nil {
					return "", err
				}
			}
			return StopCancelled, nil
		}
		// A round once started is finished (a cancelled context would
		// discard it half-way, after the clients worked); cancellation is
		// checked between rounds.
		st, err := t.StepContext(context.WithoutCancel(ctx))
		if errors.Is(err, ErrBudgetExhausted) {
			if !evaluated {
				if err := eval(); err != nil {
					return "", err
				}
			}
			if errors.Is(err, protocol.ErrRoundsDebited) {
				return StopRoundsDebited, nil
			}
			return StopTargetEpsilon, nil
		}
		if err != nil {
			return "", err
		}
		evaluated = false
		lossSum += st.Loss
		lossRounds++
		lastLR = st.LR
		trainTime += st.Duration
		if hooks.OnRound != nil {
			if err := hooks.OnRound(st); err != nil {
				return "", err
			}
		}
		if t.evalDue(t.Round(), total) {
			if err := eval(); err != nil {
				return "", err
			}
		}
	}
	if !evaluated { // nothing left to run (a finished run resumed): report where it stands
		if err := eval(); err != nil {
			return "", err
		}
	}
	return StopEpochs, nil
}

func finiteOrNil(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}
