package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/shuffledp/shuffledp/cliflag"
	"github.com/shuffledp/shuffledp/data"
	"github.com/shuffledp/shuffledp/metrics"
	"github.com/shuffledp/shuffledp/training"
)

func init() { rootCmd.AddCommand(newTrainCmd()) }

// trainFlags are the flags of train (and of up and server): the run's
// options, and where and how it is kept and shown.
type trainFlags struct {
	training.Options
	Metrics    string `flag:"metrics" metavar:"FILE" usage:"write one JSON object per evaluation to this JSONL FILE (default with --state: DIR/metrics.jsonl)"`
	State      string `flag:"state" metavar:"DIR" usage:"state directory of the run (DIR; its parent must exist): durable privacy ledger, checkpoint, metrics, lock. A rerun with the same flags resumes; different flags are refused"`
	Checkpoint string `flag:"checkpoint,hidden" usage:"removed: use --state"` // removed flags, kept to explain their replacement
	Resume     string `flag:"resume,hidden" usage:"removed: use --state"`
	NoProgress bool   `flag:"no-progress" usage:"do not draw the progress bar on stderr"`
	Preset     string `flag:"preset" usage:"set the paper's stated setting (see Presets above): neurips21-fig3 or neurips21-fig6; flags given explicitly win"`
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
	cliflag.MustBind(cmd.Flags(), &f)
	cmd.AddCommand(newTrainPlotCmd())
	return cmd
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
	return append(path, cliflag.Args(cmd.Flags())...)
}

// trainRunFlags returns the run's identity in its state directory
// (training.Config.Identity) from every flag of the command, set or
// default, but those named in except.
func trainRunFlags(cmd *cobra.Command, cfg training.Config, except ...string) map[string]string {
	fs := cmd.Flags()
	except = append([]string{"state", "checkpoint", "resume", "help", "preset"}, except...)
	return cfg.Identity(cliflag.Values(fs, except...), func(name string) bool {
		return fs.Lookup(name).Value.String() == fs.Lookup(name).DefValue
	})
}

// trainConfig applies --preset and returns the validated training
// configuration of the train flags (train, up and server share it).
func trainConfig(cmd *cobra.Command, f *trainFlags) (training.Config, error) {
	if f.Preset != "" {
		p, err := training.FindPreset(f.Preset)
		if err != nil {
			return training.Config{}, err
		}
		if _, err := p.ApplyTo(cliflag.Target{FS: cmd.Flags()}); err != nil {
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
	run, err := training.OpenLocal(commandContext(cmd), training.LocalConfig{Options: f.Options, Config: cfg, State: f.State, Flags: trainRunFlags(cmd, cfg), Metrics: f.Metrics})
	if err != nil {
		return err
	}
	defer run.Close()
	stderr := cmd.ErrOrStderr()
	if err := run.WriteStart(stderr); err != nil {
		return err
	}
	ctx, stop := signalContext(commandContext(cmd))
	defer stop()
	reason, last, err := run.RunWithProgress(ctx, stderr, !f.NoProgress)
	if err != nil {
		return err
	}
	return printTrainEnd(cmd, run, reason, last)
}

// trainRunConfig is trainConfig with the checks of train's own flags.
func trainRunConfig(cmd *cobra.Command, f *trainFlags) (training.Config, error) {
	if f.Checkpoint != "" || f.Resume != "" {
		return training.Config{}, errors.New("--checkpoint and --resume were replaced by --state DIR (a directory holding the run's durable privacy ledger, checkpoint, metrics and lock; rerunning the same command resumes)")
	}
	return trainConfig(cmd, f)
}

// printTrainEnd prints why and where the run stopped (LocalRun.WriteEnd);
// an interrupted run exits 130.
func printTrainEnd(cmd *cobra.Command, out *training.LocalRun, reason training.StopReason, last metrics.Record) error {
	if err := out.WriteEnd(cmd.OutOrStdout(), reason, last); err != nil {
		return err
	}
	if reason == training.StopCancelled {
		if out.Session != nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "train: state saved in %s; run the same command again to resume\n", out.Session.Dir())
		}
		return errInterrupted
	}
	return nil
}
