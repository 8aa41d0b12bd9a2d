package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/shuffledp/shuffledp/data"
	"github.com/shuffledp/shuffledp/metrics"
	"github.com/shuffledp/shuffledp/server"
	"github.com/shuffledp/shuffledp/training"
)

func init() { rootCmd.AddCommand(newTrainCmd()) }

// trainFlags are the flags of train (and of up and server): the run's
// options, and where and how it is kept and shown.
type trainFlags struct {
	training.Options
	metrics, state     string
	checkpoint, resume string // removed flags, kept to explain their replacement
	noProgress         bool
	preset             string
}

func newTrainCmd() *cobra.Command {
	var f trainFlags
	cmd := &cobra.Command{
		Use:   "train",
		Short: "Train with CLDP-SGD (NeurIPS'21 Algorithm 1) and account for its privacy",
		Long:  longHelp("train") + training.PresetHelp(),
		Example: `  shuffledp data fetch mnist   # into ` + data.DefaultMNISTDir + `
  shuffledp train --dataset mnist --data-dir ` + data.DefaultMNISTDir + ` --model cnn --clients 60000 \
    --sample 10000 --randomizer rinf --clip 0.01 --eps0 1.5 --delta 1e-5 --epochs 200 \
    --lr 0.3,70:0.18 --seed 1 --state runs/fig3
  # Ctrl-C (exit 130) or a crash, then the same command again: it resumes
  shuffledp ledger show --state runs/fig3 --json
  # the paper's Fig. 3 setting on the authors' network, Nesterov momentum and an EMA
  shuffledp train --data-dir ` + data.DefaultMNISTDir + ` --preset neurips21-fig3 --optimizer nesterov \
    --momentum 0.9 --ema 0.99 --state runs/fig3-nesterov`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runTrain(cmd, &f) },
	}
	addTrainFlags(cmd.Flags(), &f)
	cmd.AddCommand(newTrainPlotCmd())
	return cmd
}

// addTrainFlags registers the train flags on fl; train, up and server share
// them.
func addTrainFlags(fl *pflag.FlagSet, f *trainFlags) {
	addTrainGaussianFlags(fl, &f.Gaussian)
	fl.StringVar(&f.Dataset, "dataset", "mnist", "dataset: mnist (IDX files in --data-dir), or synthetic (random data of MNIST shape, for throughput measurements)")
	fl.StringVar(&f.DataDir, "data-dir", "", "`DIR` holding the dataset (for mnist: shuffledp data fetch mnist fills "+data.DefaultMNISTDir+")")
	fl.StringVar(&f.Model, "model", "cnn", "model: cnn (NeurIPS'21 Table 1: ReLU, 32 filters in conv2), cnn-tanh (the authors' network: tanh, 16 filters, d = 13,706), mlp, logreg or logreg-dct (logreg in a DCT basis of the sum-zero logits: same classifiers, the residual spread over classes-1 rows, d = (classes-1)(inputs+1))")
	fl.IntVar(&f.Clients, "clients", 60000, "n: number of clients, each holding one training example (the first n)")
	fl.IntVar(&f.Sample, "sample", 10000, "k: clients sampled without replacement per round")
	fl.StringVar(&f.Randomizer, "randomizer", "rinf", "local randomizer: none (non-private baseline), rinf, r1, r2, privunit (the R_2 arXiv Fig. 5(b) names), djw (Duchi-Jordan-Wainwright l2, the R_2 of the authors' code), gaussian (each client adds N(0, C^2 sigma^2 I): DP-SGD in the shuffle model) or central-gaussian (the central-DP baseline; see Gaussian runs below)")
	fl.StringVar(&f.ClipNorm, "clip-norm", "", "clipping norm l1, l2 or linf (default: linf for rinf, l1 for r1, l2 for r2 and none)")
	fl.Float64Var(&f.Clip, "clip", 0.01, "clipping radius C: g <- g / max(1, ||g||_p / C)")
	fl.StringVar(&f.LinfClip, "linf-clip", "scale", "with --clip-norm linf: scale (Algorithm 1: g / max(1, ||g||_inf/C)) or clamp (each coordinate into [-C, C])")
	fl.Float64Var(&f.Eps0, "eps0", 1.5, "local DP parameter of the randomizer")
	fl.Float64Var(&f.Delta, "delta", 1e-5, "delta of the reported (epsilon, delta)-DP guarantee (account's default is 1e-8: pass it --delta 1e-5 to compare)")
	fl.Float64Var(&f.Epochs, "epochs", 200, "epochs to train (an epoch is clients/sample rounds; fractions allowed)")
	fl.StringVar(&f.LR, "lr", "0.3,70:0.18", "learning-rate schedule: RATE[,EPOCH:RATE...], e.g. 0.3,70:0.18")
	fl.Uint64Var(&f.Seed, "seed", 1, "seed of every random choice (simulation only)")
	fl.StringVar(&f.state, "state", "", "state directory of the run (`DIR`; its parent must exist): durable privacy ledger, checkpoint, metrics, lock. A rerun with the same flags resumes; different flags are refused")
	fl.StringVar(&f.metrics, "metrics", "", "write one JSON object per evaluation to this JSONL `FILE` (default with --state: DIR/metrics.jsonl)")
	fl.Float64Var(&f.TargetEpsilon, "target-epsilon", 0, "stop before the round that would make epsilon exceed this (0 = no target)")
	fl.IntVar(&f.EvalEvery, "eval-every", 0, "evaluate every this many rounds (0 = once per epoch)")
	fl.StringVar(&f.checkpoint, "checkpoint", "", "removed: use --state")
	fl.StringVar(&f.resume, "resume", "", "removed: use --state")
	fl.MarkHidden("checkpoint")
	fl.MarkHidden("resume")
	fl.Float64Var(&f.ProjectRadius, "project-radius", 0, "project the parameters onto the l2 ball of this radius after every step (0 = no projection)")
	fl.IntVar(&f.Workers, "workers", 0, "goroutines computing client gradients (0 = GOMAXPROCS; results do not depend on it)")
	fl.BoolVar(&f.CryptoNoise, "crypto-noise", false, "draw client randomizer noise from crypto/rand (not reproducible)")
	fl.BoolVar(&f.ClipDiagnostic, "clip-diagnostic", false, "SIMULATION ONLY: at every evaluation measure the clip's bias on the training clients' clear gradients (metrics clip_bias: clipped fraction, cosine and norms of the mean clipped against the mean gradient, R_inf's noise); changes no step; refused by networked runs")
	fl.BoolVar(&f.noProgress, "no-progress", false, "do not draw the progress bar on stderr")
	fl.IntVar(&f.TestSize, "test-size", 0, "evaluate on the first this many test examples (0 = all)")
	fl.IntVar(&f.Validation, "validation", 0, "tune honestly: hold out this many training examples (a fixed random split), train on the rest and evaluate on them instead of the test set, which is then never evaluated; metrics say eval_set \"validation\" (0 = off)")
	fl.StringVar(&f.Optimizer, "optimizer", server.OptimizerSGD, "server optimizer (privacy-free post-processing): sgd (Algorithm 1), momentum (heavy ball: v = mu v + g, step lr v), nesterov (step lr (g + mu v)) or adam")
	fl.Float64Var(&f.Momentum, "momentum", 0.9, "mu of --optimizer momentum and nesterov, in [0, 1)")
	fl.StringVar(&f.AdamBetas, "adam-betas", "0.9,0.999", "`B1,B2` of --optimizer adam, each in [0, 1)")
	fl.Float64Var(&f.AdamEps, "adam-eps", 1e-8, "epsilon of --optimizer adam (added to the root of the second moment), > 0")
	fl.Float64Var(&f.EMA, "ema", 0, "`DECAY` in [0, 1) of an exponential moving average of the parameters (debiased), evaluated beside them (test_accuracy_ema); 0 = off")
	fl.Float64Var(&f.LRWarmup, "lr-warmup", 0, "linear learning-rate warm-up over the first this many `EPOCHS` (fractions allowed; 0 = none)")
	fl.StringVar(&f.LRDecay, "lr-decay", training.DecayNone, "learning-rate decay on top of --lr: none, cosine:END[:MIN] (to MIN times the rate at epoch END) or step:EVERY:GAMMA (times GAMMA every EVERY epochs)")
	fl.StringVar(&f.Features, "features", "none", "fixed per-example feature extractor applied on each client before its gradient (no privacy cost; cached in DATA-DIR/features): none, scatter (ScatterNet J=2 L=8, 2x2 pooling, group norm over 3 channels: 324 features) or scatter:j=J,l=L,pool=P,norm=none|unit|group,groups=G; use with --model logreg or mlp")
	fl.StringVar(&f.preset, "preset", "", "set the paper's stated setting (see Presets above): neurips21-fig3 or neurips21-fig6; flags given explicitly win")
}

// commandPath returns the subcommand path and the arguments as given
// ("train", "--eps0=2", ...): the command line that reproduces the run.
func commandPath(cmd *cobra.Command) []string {
	var path []string
	for c := cmd; c != nil && c.HasParent(); c = c.Parent() {
		path = append([]string{c.Name()}, path...)
	}
	if len(path) == 0 {
		path = []string{cmd.Name()}
	}
	var args []string
	cmd.Flags().Visit(func(fl *pflag.Flag) {
		args = append(args, "--"+fl.Name+"="+fl.Value.String())
	})
	return append(path, args...)
}

// trainRunFlags returns every flag of the train command (set or default)
// as name → value, the run's identity in its state directory. --preset is
// not part of it: the values it set are; the adjacency is, when
// training.Config.IdentityAdjacency says so.
func trainRunFlags(cmd *cobra.Command, cfg training.Config) map[string]string {
	m := map[string]string{}
	if adj, ok := cfg.IdentityAdjacency(); ok {
		m["adjacency"] = adj
	}
	cmd.Flags().VisitAll(func(fl *pflag.Flag) {
		switch fl.Name {
		case "state", "checkpoint", "resume", "help", "preset", "adjacency":
			return
		}
		if training.LaterFlags[fl.Name] && fl.Value.String() == fl.DefValue {
			return
		}
		m[fl.Name] = fl.Value.String()
	})
	return m
}

// trainConfig applies --preset and returns the validated training
// configuration of the train flags (train, up and server share it).
func trainConfig(cmd *cobra.Command, f *trainFlags) (training.Config, error) {
	if f.preset != "" {
		if _, err := applyTrainPreset(cmd.Flags(), f.preset); err != nil {
			return training.Config{}, err
		}
	}
	return f.Options.Config(cmd.Flags().Changed, append([]string{"shuffledp"}, commandPath(cmd)...))
}

func runTrain(cmd *cobra.Command, f *trainFlags) error {
	cfg, err := trainRunConfig(cmd, f)
	if err != nil {
		return err
	}
	run, err := training.OpenLocal(commandContext(cmd), training.LocalConfig{Options: f.Options, Config: cfg, State: f.state, Flags: trainRunFlags(cmd, cfg), Metrics: f.metrics})
	if err != nil {
		return err
	}
	defer run.Close()
	stderr := cmd.ErrOrStderr()
	if err := printTrainStart(stderr, run); err != nil {
		return err
	}
	ctx, stop := signalContext(commandContext(cmd))
	defer stop()
	reason, last, err := trainWithProgress(ctx, stderr, f.noProgress, run)
	if err != nil {
		return err
	}
	return printTrainEnd(cmd, run, reason, last)
}

// trainRunConfig is trainConfig with the checks of train's own flags.
func trainRunConfig(cmd *cobra.Command, f *trainFlags) (training.Config, error) {
	if f.checkpoint != "" || f.resume != "" {
		return training.Config{}, errors.New("--checkpoint and --resume were replaced by --state DIR (a directory holding the run's durable privacy ledger, checkpoint, metrics and lock; rerunning the same command resumes)")
	}
	cfg, err := trainConfig(cmd, f)
	if err != nil {
		return cfg, err
	}
	if f.TestSize < 0 {
		return cfg, fmt.Errorf("test-size must be >= 0, got %d", f.TestSize)
	}
	if f.Validation < 0 {
		return cfg, fmt.Errorf("validation must be >= 0, got %d", f.Validation)
	}
	return cfg, nil
}

// printTrainStart describes the run on stderr, and where it is kept.
func printTrainStart(stderr io.Writer, out *training.LocalRun) error {
	cfg, m := out.Trainer.Config(), out.Trainer.Model()
	fmt.Fprintf(stderr, "train: %s on %d clients, k=%d per round, %s (clip %s %g, eps0 %g), %d rounds (%.4g epochs of %.4g rounds), %d params, %d workers\n",
		m.Name(), cfg.Clients, cfg.Sample, cfg.Randomizer, cfg.ClipNorm, cfg.Clip, cfg.Eps0, cfg.TotalRounds(), cfg.Epochs,
		float64(cfg.Clients)/float64(cfg.Sample), m.NumParams(), cfg.Workers)
	session := out.Session
	switch {
	case session == nil:
		if cfg.Randomizer != training.RandomizerNone {
			fmt.Fprintln(stderr, "train: no --state: the privacy ledger is kept in memory only and the run cannot resume; pass --state DIR for a durable ledger")
		}
	case session.Resumed():
		msg := fmt.Sprintf("train: resuming run %s in %s at round %d", session.Run(), session.Dir(), out.ResumedAt)
		if l := session.Ledger(); l != nil {
			g, err := l.Epsilon()
			if err != nil {
				return err
			}
			msg += fmt.Sprintf("; ledger: %d rounds debited, epsilon %.4g at delta %g", l.Rounds(), g.Epsilon, cfg.Delta)
		}
		fmt.Fprintln(stderr, msg)
	default:
		fmt.Fprintf(stderr, "train: run %s in %s\n", session.Run(), session.Dir())
	}
	return nil
}

// newTrainBar is the progress bar over the run's rounds, at the rounds done.
func newTrainBar(stderr io.Writer, tr *training.Trainer) *progressbar.ProgressBar {
	cfg := tr.Config()
	bar := progressbar.NewOptions(cfg.TotalRounds(),
		progressbar.OptionSetWriter(stderr),
		progressbar.OptionSetDescription("rounds"),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionThrottle(200*time.Millisecond),
		progressbar.OptionSetWidth(30),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(stderr) }),
	)
	bar.Set(tr.Round())
	return bar
}

// trainWithProgress runs the run, drawing the progress bar or printing
// every evaluation; it returns the last evaluation.
func trainWithProgress(ctx context.Context, stderr io.Writer, noProgress bool, run *training.LocalRun) (training.StopReason, metrics.Record, error) {
	var bar *progressbar.ProgressBar
	if !noProgress {
		bar = newTrainBar(stderr, run.Trainer)
	}
	var last metrics.Record
	reason, err := run.Run(ctx, training.Hooks{
		OnRound: func(training.RoundStats) error {
			if bar != nil {
				bar.Add(1)
			}
			return nil
		},
		OnEval: func(r metrics.Record) error {
			last = r
			desc := fmt.Sprintf("epoch %.4g acc %s eps %s", r.Epoch, fmtPtr(r.TestAccuracy, "%.4f"), fmtPtr(r.Epsilon, "%.4g"))
			if bar != nil {
				bar.Describe(desc)
			} else {
				fmt.Fprintf(stderr, "round %d %s (%.0f client-updates/s)\n", r.Round, desc, r.ClientUpdatesPerSec)
			}
			return nil
		},
	})
	if bar != nil {
		bar.Exit()
		fmt.Fprintln(stderr)
	}
	return reason, last, err
}

// printTrainEnd prints why and where the run stopped, its accuracy and
// the epsilon its ledger has debited; an interrupted run exits 130.
func printTrainEnd(cmd *cobra.Command, out *training.LocalRun, reason training.StopReason, last metrics.Record) error {
	cfg := out.Trainer.Config()
	eps := "n/a (no randomizer)"
	if l := out.Trainer.Ledger(); l != nil {
		g, err := l.Epsilon()
		if err != nil {
			return err
		}
		eps = fmt.Sprintf("%.4g (%d rounds debited)", g.Epsilon, l.Rounds())
	}
	evalSet := "test"
	if cfg.EvalSet != "" {
		evalSet = cfg.EvalSet
	}
	fmt.Fprintf(cmd.OutOrStdout(), "stopped (%s) after round %d (epoch %.4g): %s accuracy %s, epsilon %s at delta %g\n",
		reason, last.Round, last.Epoch, evalSet, fmtPtr(last.TestAccuracy, "%.4f"), eps, cfg.Delta)
	if reason == training.StopCancelled {
		if out.Session != nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "train: state saved in %s; run the same command again to resume\n", out.Session.Dir())
		}
		return errInterrupted
	}
	return nil
}

func fmtPtr(v *float64, format string) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf(format, *v)
}
