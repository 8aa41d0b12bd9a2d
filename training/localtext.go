package training

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/shuffledp/shuffledp/internal/directed"
	"github.com/shuffledp/shuffledp/metrics"
)

// WriteStart describes the run on w as `shuffledp train` prints it before
// the first round: the model, the population, the randomizer and the
// rounds, then where the run is kept (or that its ledger is in memory
// only), and for a resumed run the rounds and epsilon its ledger holds.
func (r *LocalRun) WriteStart(w io.Writer) error {
	cfg, m := r.Trainer.Config(), r.Trainer.Model()
	fmt.Fprintf(w, "train: %s on %d clients, k=%d per round, %s (clip %s %g, eps0 %g), %d rounds (%.4g epochs of %.4g rounds), %d params, %d workers\n",
		m.Name(), cfg.Clients, cfg.Sample, cfg.Randomizer, cfg.ClipNorm, cfg.Clip, cfg.Eps0, cfg.TotalRounds(), cfg.Epochs,
		float64(cfg.Clients)/float64(cfg.Sample), m.NumParams(), cfg.Workers)
	if cfg.ClientLevel() {
		fmt.Fprintf(w, "train: each client holds %d examples (partition %s) and takes %d local steps (local-lr %g); %s\n",
			cfg.ExamplesPerClient, cfg.Partition, cfg.LocalSteps, cfg.LocalLR, ClientLevelNote)
	}
	session := r.Session
	switch {
	case session == nil:
		if cfg.Randomizer != RandomizerNone {
			fmt.Fprintln(w, "train: no --state: the privacy ledger is kept in memory only and the run cannot resume; pass --state DIR for a durable ledger")
		}
	case session.Resumed():
		msg := fmt.Sprintf("train: resuming run %s in %s at round %d", session.Run(), session.Dir(), r.ResumedAt)
		if l := session.Ledger(); l != nil {
			st, err := l.Statement()
			if err != nil {
				return err
			}
			msg += fmt.Sprintf("; ledger: %d rounds debited, epsilon %s by %s at delta %g", l.Rounds(), directed.Upper(st.Epsilon, 4), st.Label(), cfg.Delta)
		}
		fmt.Fprintln(w, msg)
	default:
		fmt.Fprintf(w, "train: run %s in %s\n", session.Run(), session.Dir())
	}
	return nil
}

// WriteEnd prints on w why and where the run stopped (last is its last
// evaluation), its accuracy on the evaluation set and the epsilon its
// ledger has debited, as `shuffledp train` prints it at the end.
func (r *LocalRun) WriteEnd(w io.Writer, reason StopReason, last metrics.Record) error {
	cfg := r.Trainer.Config()
	eps := "n/a (no randomizer)"
	if l := r.Trainer.Ledger(); l != nil {
		st, err := l.Statement()
		if err != nil {
			return err
		}
		eps = fmt.Sprintf("%s (%d rounds debited; %s)", directed.Upper(st.Epsilon, 4), l.Rounds(), st.Label())
	}
	evalSet := "test"
	if cfg.EvalSet != "" {
		evalSet = cfg.EvalSet
	}
	unit := ""
	if cfg.ClientLevel() {
		unit = " (" + ClientLevelNote + ")"
	}
	_, err := fmt.Fprintf(w, "stopped (%s) after round %d (epoch %.4g): %s accuracy %s, epsilon %s at delta %g%s\n",
		reason, last.Round, last.Epoch, evalSet, metrics.Format(last.TestAccuracy, "%.4f"), eps, cfg.Delta, unit)
	return err
}

// RunWithProgress runs r (Run) showing its progress on w: with bar, a
// progress bar over the run's rounds (from the rounds already done) whose
// description is the last evaluation (metrics.Record.Progress); without
// it, a line per evaluation with the throughput. It returns why the run
// stopped and its last evaluation.
func (r *LocalRun) RunWithProgress(ctx context.Context, w io.Writer, bar bool) (StopReason, metrics.Record, error) {
	var pb *progressbar.ProgressBar
	if bar {
		cfg := r.Trainer.Config()
		pb = progressbar.NewOptions(cfg.TotalRounds(),
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription("rounds"),
			progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionSetElapsedTime(true),
			progressbar.OptionThrottle(200*time.Millisecond),
			progressbar.OptionSetWidth(30),
			progressbar.OptionOnCompletion(func() { fmt.Fprintln(w) }),
		)
		pb.Set(r.Trainer.Round())
	}
	var last metrics.Record
	reason, err := r.Run(ctx, Hooks{
		OnRound: func(RoundStats) error {
			if pb != nil {
				pb.Add(1)
			}
			return nil
		},
		OnEval: func(rec metrics.Record) error {
			last = rec
			if pb != nil {
				pb.Describe(rec.Progress())
			} else {
				fmt.Fprintf(w, "round %d %s (%.0f client-updates/s)\n", rec.Round, rec.Progress(), rec.ClientUpdatesPerSec)
			}
			return nil
		},
	})
	if pb != nil {
		pb.Exit()
		fmt.Fprintln(w)
	}
	return reason, last, err
}
