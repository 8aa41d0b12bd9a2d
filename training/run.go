package training

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/shuffledp/shuffledp/accounting"
	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/server"
)

// Record is one evaluation, written as one JSON object per line by the
// --metrics file. Epsilon is null (nil) for the non-private baseline.
type Record struct {
	// Epoch is the number of epochs completed, rounds*k/n.
	Epoch float64 `json:"epoch"`
	// Round is the number of rounds completed.
	Round int `json:"round"`
	// TestAccuracy and TestLoss are measured on the evaluation set (the
	// test set, or the validation split when EvalSet says so), at the
	// model's parameters (the raw iterate).
	TestAccuracy *float64 `json:"test_accuracy"`
	TestLoss     *float64 `json:"test_loss"`
	// TestAccuracyEMA and TestLossEMA are measured at the exponential
	// moving average of the parameters (Config.EMA; absent without it).
	TestAccuracyEMA *float64 `json:"test_accuracy_ema,omitempty"`
	TestLossEMA     *float64 `json:"test_loss_ema,omitempty"`
	// TrainLoss is the mean loss of the sampled clients' examples over the
	// rounds since the previous evaluation (null at round 0).
	TrainLoss *float64 `json:"train_loss"`
	// Epsilon is the (epsilon, Delta)-DP guarantee of all rounds so far
	// (null without a randomizer); RDPOrder is the order that attained it.
	Epsilon *float64 `json:"epsilon"`
	// EpsilonNeurIPS21 is the guarantee at Delta of the same rounds by
	// NeurIPS'21 Theorem 1 alone (bound neurips21-upper composed over the
	// ledger's events: the paper's own accounting, what `shuffledp account
	// --bound neurips21-upper` gives), for comparisons with the paper at
	// equal accounting; null without a randomizer. It is never below
	// Epsilon, which takes the pointwise minimum with every other bound.
	EpsilonNeurIPS21 *float64 `json:"epsilon_neurips21"`
	Delta            float64  `json:"delta"`
	RDPOrder         *float64 `json:"rdp_order,omitempty"`
	// OrderAtGridEdge warns that the best order was at the edge of the
	// accountant's order grid (a wider grid might give a smaller epsilon).
	OrderAtGridEdge bool `json:"rdp_order_at_grid_edge,omitempty"`
	// LedgerRounds (null without a randomizer) is the number of rounds the privacy ledger has debited
	// for the run, which Epsilon accounts for: at least Round, more if
	// rounds were released and then lost to a crash before a checkpoint.
	LedgerRounds *int64 `json:"ledger_rounds,omitempty"`
	// Bound names the RDP bound composed every round.
	Bound string `json:"bound,omitempty"`
	// BoundWinner names the component of the best bound that attains it
	// at RDPOrder.
	BoundWinner string `json:"bound_winner,omitempty"`
	// LR is the learning rate of the last round.
	LR float64 `json:"lr"`
	// Optimizer is the server's optimizer with its parameters
	// (server.Optimizer.String), absent for SGD; EMA the decay of the
	// evaluated average, absent without one.
	Optimizer string  `json:"optimizer,omitempty"`
	EMA       float64 `json:"ema,omitempty"`
	// WallSeconds is the wall time since this process started training
	// (a resumed run starts again from 0).
	WallSeconds float64 `json:"wall_seconds"`
	// ClientUpdatesPerSec is the throughput (per-client gradient, clip,
	// randomize, shuffle and aggregate) since the previous evaluation,
	// evaluation time excluded.
	ClientUpdatesPerSec float64 `json:"client_updates_per_sec"`
	// Command is the command line that produced the record (Config.Command).
	Command []string `json:"command,omitempty"`
	// EvalSet is "validation" when the accuracies and losses are measured
	// on a split held out of the training set (Config.EvalSet); absent for
	// the test set.
	EvalSet string `json:"eval_set,omitempty"`
	// Run parameters, repeated on every line so a file is self-describing.
	Model      string  `json:"model"`
	Randomizer string  `json:"randomizer"`
	ClipNorm   string  `json:"clip_norm"`
	ClampLinf  bool    `json:"linf_clamp,omitempty"`
	Clip       float64 `json:"clip"`
	Eps0       float64 `json:"eps0"`
	Clients    int     `json:"clients"`
	Sample     int     `json:"sample"`
	Seed       uint64  `json:"seed"`
	// Gaussian runs (gaussian.go): the noise multiplier, check-in or
	// Poisson participation with its rate, the summed-noise simulation,
	// and the mean batch size over the rounds since the previous
	// evaluation (with a rate the batch size is random; Sample is then its
	// expected value). Absent for the eps0-LDP randomizers.
	Sigma         float64  `json:"sigma,omitempty"`
	Participation string   `json:"participation,omitempty"`
	Rate          float64  `json:"rate,omitempty"`
	NoiseSum      bool     `json:"noise_sum,omitempty"`
	MeanBatch     *float64 `json:"mean_batch,omitempty"`
	// Adjacency is the neighbouring relation Epsilon is for
	// (Config.Adjacency; event.Event.Adjacency), on the Gaussian runs'
	// records; absent in records written before it existed (zero-out for
	// gaussian, add-remove for central-gaussian) and for the eps0-LDP
	// randomizers (replace-one).
	Adjacency string `json:"adjacency,omitempty"`
}

// StopReason says why Run returned.
type StopReason string

const (
	// StopEpochs: all ceil(epochs*n/k) rounds ran.
	StopEpochs StopReason = "epochs"
	// StopTargetEpsilon: the next round would have exceeded --target-epsilon.
	StopTargetEpsilon StopReason = "target-epsilon"
	// StopCancelled: the context was cancelled (e.g. Ctrl-C).
	StopCancelled StopReason = "cancelled"
)

// Hooks are callbacks of Run; nil ones are skipped. An error returned by a
// hook stops Run with that error.
type Hooks struct {
	// OnRound is called after every round.
	OnRound func(RoundStats) error
	// OnEval is called with every evaluation record.
	OnEval func(Record) error
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
		e := t.Evaluate(nil)
		rec := Record{
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
		t.gaussianFields(&rec) // gaussian.go
		if lossRounds > 0 {
			rec.TrainLoss = finiteOrNil(lossSum / float64(lossRounds))
		}
		if trainTime > 0 {
			rec.ClientUpdatesPerSec = float64(t.updates-updatesAtEval) / trainTime.Seconds()
		}
		if t.ledger != nil {
			g, err := t.ledger.Epsilon()
			if err != nil {
				return err
			}
			rec.Epsilon, rec.RDPOrder = &g.Epsilon, finiteOrNil(g.Order) // no order before round 1
			lr := t.ledger.Rounds()
			rec.LedgerRounds = &lr
			if t.best == nil { // the Gaussian mechanisms (gaussian.go)
				rec.OrderAtGridEdge = g.AtGridEdge
				rec.Bound, rec.BoundWinner = t.gaussianBound(g.Order)
			} else {
				rec.OrderAtGridEdge, rec.Bound = g.AtGridEdge, t.best.Name()
				if g.Order > 1 {
					_, rec.BoundWinner, _ = t.best.RDPWinner(g.Order)
				}
				paper, err := event.Epsilon(t.ledger.Events(), accounting.BoundNeurIPS21Upper, t.cfg.Delta, nil)
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
