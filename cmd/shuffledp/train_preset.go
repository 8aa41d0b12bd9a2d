package main

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"
)

// trainPreset is a named set of train flag values: the stated setting of a
// paper's figure. Flags given on the command line win over the preset's.
type trainPreset struct {
	name, summary string
	flags         [][2]string // flag name, value; in the order listed by --help
}

// trainPresets are the settings of the NeurIPS'21 training figures (Girgis
// et al., "Renyi Differential Privacy of the Subsampled Shuffle Model in
// Distributed Learning") on the authors' network, as their public code runs
// them (repository Antonious-Grigis/Shuffled-Model-of-Differential-Privacy-
// in-Federated-Learning, MNIST_dpsgd_norm_infinity.py and
// MNIST_dpsgd_norm_2.py; the code's epochs count from 1, "epoch > 70" is our
// epoch 70 counted from 0). Delta 1e-5 and n = 60,000 in both.
var trainPresets = []trainPreset{
	{
		name: "neurips21-fig3",
		summary: "NeurIPS'21 Fig. 3 (arXiv Fig. 5(a)): R_inf, l_inf clip C = 0.01 (the code clamps " +
			"the sampled coordinate), eps0 = 1.5, k = 10,000 of n = 60,000, lr 0.3 then 0.18 from epoch 70, 200 epochs",
		flags: [][2]string{
			{"model", "cnn-tanh"}, {"clients", "60000"}, {"sample", "10000"}, {"randomizer", "rinf"},
			{"clip-norm", "linf"}, {"linf-clip", "clamp"}, {"clip", "0.01"}, {"eps0", "1.5"}, {"delta", "1e-5"},
			{"epochs", "200"}, {"lr", "0.3,70:0.18"},
		},
	},
	{
		name: "neurips21-fig3-tuned",
		summary: "our tuned setting for NeurIPS'21 Fig. 3 (same randomizer, eps0, C, k and n; chosen on a " +
			"validation split, results/tuning-neurips21-fig3): lr 0.4 with a cosine decay to 0.1 at epoch 180, " +
			"the parameters' exponential moving average (0.99) evaluated next to the raw ones, 200 epochs",
		flags: [][2]string{
			{"model", "cnn-tanh"}, {"clients", "60000"}, {"sample", "10000"}, {"randomizer", "rinf"},
			{"clip-norm", "linf"}, {"linf-clip", "clamp"}, {"clip", "0.01"}, {"eps0", "1.5"}, {"delta", "1e-5"},
			{"epochs", "200"}, {"lr", "0.4"}, {"lr-decay", "cosine:180:0.25"}, {"ema", "0.99"},
		},
	},
	{
		name: "neurips21-fig6",
		summary: "NeurIPS'21 supplement Fig. 6 (arXiv Fig. 5(b)): the authors' R_2 (DJW13's l2 mechanism), " +
			"l2 clip C = 0.005, eps0 = 2, k = 2,000 of n = 60,000, the code's lr schedule, 300 epochs " +
			"(the paper's text says lr 12 -> 4 -> 3.5; its curve ends at epsilon 5.8, after 200 epochs)",
		flags: [][2]string{
			{"model", "cnn-tanh"}, {"clients", "60000"}, {"sample", "2000"}, {"randomizer", "djw"},
			{"clip-norm", "l2"}, {"clip", "0.005"}, {"eps0", "2"}, {"delta", "1e-5"},
			{"epochs", "300"}, {"lr", "12,30:5,60:4,100:3.5,140:3,190:2"},
		},
	},
}

// findTrainPreset returns the preset named name.
func findTrainPreset(name string) (trainPreset, error) {
	var names []string
	for _, p := range trainPresets {
		if p.name == name {
			return p, nil
		}
		names = append(names, p.name)
	}
	return trainPreset{}, fmt.Errorf("preset must be one of %s, got %q", strings.Join(names, ", "), name)
}

// applyTrainPreset sets every flag of the named preset that was not given
// on the command line, as if it had been (so the run's recorded command
// line lists it), and returns the flags it set.
func applyTrainPreset(fs *pflag.FlagSet, name string) ([]string, error) {
	p, err := findTrainPreset(name)
	if err != nil {
		return nil, err
	}
	var set []string
	for _, kv := range p.flags {
		fl := fs.Lookup(kv[0])
		if fl == nil {
			return nil, fmt.Errorf("preset %s: no flag --%s (a bug)", name, kv[0])
		}
		if fl.Changed {
			continue
		}
		if kv[0] == "linf-clip" && !linfClipApplies(fs) {
			continue // --clip-norm l1|l2 given: the l_inf clip rule does not apply
		}
		if err := fs.Set(kv[0], kv[1]); err != nil {
			return nil, fmt.Errorf("preset %s: --%s %s: %w", name, kv[0], kv[1], err)
		}
		set = append(set, kv[0])
	}
	return set, nil
}

// linfClipApplies reports whether a preset's --linf-clip may be applied:
// not when --clip-norm was given with another norm (e.g. the R_1 run of
// NeurIPS'21 Fig. 3's stated setting: --preset neurips21-fig3 --randomizer
// r1 --clip-norm l1), where the l_inf clip rule has no meaning.
func linfClipApplies(fs *pflag.FlagSet) bool {
	cn := fs.Lookup("clip-norm")
	return cn == nil || !cn.Changed || cn.Value.String() == "linf"
}

// trainPresetHelp describes every preset for train --help.
func trainPresetHelp() string {
	var b strings.Builder
	for _, p := range trainPresets {
		fmt.Fprintf(&b, "  %s\n", p.name)
		writeWrapped(&b, strings.Fields(p.summary), "      ", 80)
		fl := []string{"sets:"}
		for _, kv := range p.flags {
			fl = append(fl, "--"+kv[0]+" "+kv[1]) // a flag and its value on one line
		}
		writeWrapped(&b, fl, "      ", 80)
	}
	return b.String()
}

// writeWrapped writes the words as lines of at most width columns (a word
// longer than that gets a line of its own; words are never split), each
// starting with indent.
func writeWrapped(b *strings.Builder, words []string, indent string, width int) {
	line := indent
	for _, w := range words {
		if len(line) > len(indent) && len(line)+1+len(w) > width {
			b.WriteString(line + "\n")
			line = indent
		}
		if len(line) > len(indent) {
			line += " "
		}
		line += w
	}
	if len(line) > len(indent) {
		b.WriteString(line + "\n")
	}
}
