package training

import (
	"fmt"
	"strings"
)

// Preset is a named setting of a paper's training figure, as values of the
// train command's flags (shuffledp train --preset NAME): a flag given on
// the command line wins over the preset's value, and every other flag
// keeps its default. A preset is applied to the flags, not to a Config, so
// that the run's recorded command line spells out every value it set.
type Preset struct {
	// Name is the --preset value.
	Name string
	// Summary says what the setting is and where it is stated.
	Summary string
	// Flags are the (flag name, value) pairs, in the order --help lists
	// them.
	Flags []PresetFlag
}

// PresetFlag is one flag value of a Preset.
type PresetFlag struct{ Name, Value string }

// presets are the settings of the NeurIPS'21 training figures (Girgis et
// al., "Renyi Differential Privacy of the Subsampled Shuffle Model in
// Distributed Learning") on the authors' network, as their public code runs
// them (repository Antonious-Grigis/Shuffled-Model-of-Differential-Privacy-
// in-Federated-Learning, MNIST_dpsgd_norm_infinity.py and
// MNIST_dpsgd_norm_2.py; the code's epochs count from 1, "epoch > 70" is our
// epoch 70 counted from 0), and our tuned Fig. 3 setting. Delta 1e-5 and
// n = 60,000 in all.
var presets = []Preset{
	{
		Name: "neurips21-fig3",
		Summary: "NeurIPS'21 Fig. 3 (arXiv Fig. 5(a)): R_inf, l_inf clip C = 0.01 (the code clamps " +
			"the sampled coordinate), eps0 = 1.5, k = 10,000 of n = 60,000, lr 0.3 then 0.18 from epoch 70, 200 epochs",
		Flags: []PresetFlag{
			{"model", "cnn-tanh"}, {"clients", "60000"}, {"sample", "10000"}, {"randomizer", "rinf"},
			{"clip-norm", "linf"}, {"linf-clip", "clamp"}, {"clip", "0.01"}, {"eps0", "1.5"}, {"delta", "1e-5"},
			{"epochs", "200"}, {"lr", "0.3,70:0.18"},
		},
	},
	{
		Name: "neurips21-fig3-tuned",
		Summary: "our tuned setting for NeurIPS'21 Fig. 3 (same randomizer, eps0, C, k and n; chosen on a " +
			"validation split, results/tuning-neurips21-fig3): lr 0.4 with a cosine decay to 0.1 at epoch 180, " +
			"the parameters' exponential moving average (0.99) evaluated next to the raw ones, 200 epochs",
		Flags: []PresetFlag{
			{"model", "cnn-tanh"}, {"clients", "60000"}, {"sample", "10000"}, {"randomizer", "rinf"},
			{"clip-norm", "linf"}, {"linf-clip", "clamp"}, {"clip", "0.01"}, {"eps0", "1.5"}, {"delta", "1e-5"},
			{"epochs", "200"}, {"lr", "0.4"}, {"lr-decay", "cosine:180:0.25"}, {"ema", "0.99"},
		},
	},
	{
		Name: "neurips21-fig6",
		Summary: "NeurIPS'21 supplement Fig. 6 (arXiv Fig. 5(b)): the authors' R_2 (DJW13's l2 mechanism), " +
			"l2 clip C = 0.005, eps0 = 2, k = 2,000 of n = 60,000, the code's lr schedule, 300 epochs " +
			"(the paper's text says lr 12 -> 4 -> 3.5; its curve ends at epsilon 5.8, after 200 epochs)",
		Flags: []PresetFlag{
			{"model", "cnn-tanh"}, {"clients", "60000"}, {"sample", "2000"}, {"randomizer", "djw"},
			{"clip-norm", "l2"}, {"clip", "0.005"}, {"eps0", "2"}, {"delta", "1e-5"},
			{"epochs", "300"}, {"lr", "12,30:5,60:4,100:3.5,140:3,190:2"},
		},
	},
}

// Presets returns every preset, in the order --help lists them.
func Presets() []Preset {
	out := make([]Preset, len(presets))
	for i, p := range presets {
		out[i] = p
		out[i].Flags = append([]PresetFlag(nil), p.Flags...)
	}
	return out
}

// FindPreset returns the preset named name, or an error naming --preset
// and the presets there are.
func FindPreset(name string) (Preset, error) {
	var names []string
	for _, p := range Presets() {
		if p.Name == name {
			return p, nil
		}
		names = append(names, p.Name)
	}
	return Preset{}, fmt.Errorf("preset must be one of %s, got %q", strings.Join(names, ", "), name)
}

// PresetTarget is the command line a preset is applied to.
type PresetTarget interface {
	// Given reports whether the flag name was given on the command line,
	// and its value; ok is false for a flag the command does not have.
	Given(name string) (value string, given, ok bool)
	// Set sets the flag as if it had been given.
	Set(name, value string) error
}

// ApplyTo sets every flag of the preset that was not given, as if it had
// been, and returns the flags it set. The l_inf clip rule (linf-clip) is
// not applied when clip-norm was given with another norm (e.g. the R_1 run
// of NeurIPS'21 Fig. 3's stated setting: --preset neurips21-fig3
// --randomizer r1 --clip-norm l1), where it has no meaning.
func (p Preset) ApplyTo(fl PresetTarget) ([]string, error) {
	var set []string
	for _, kv := range p.Flags {
		_, given, ok := fl.Given(kv.Name)
		if !ok {
			return nil, fmt.Errorf("preset %s: no flag --%s (a bug)", p.Name, kv.Name)
		}
		if given {
			continue
		}
		if kv.Name == "linf-clip" {
			if norm, given, ok := fl.Given("clip-norm"); ok && given && norm != NormLInf {
				continue
			}
		}
		if err := fl.Set(kv.Name, kv.Value); err != nil {
			return nil, fmt.Errorf("preset %s: --%s %s: %w", p.Name, kv.Name, kv.Value, err)
		}
		set = append(set, kv.Name)
	}
	return set, nil
}

// PresetHelp describes every preset as `shuffledp train --help` lists
// them: its name, then its summary and the flags it sets, wrapped at 80
// columns.
func PresetHelp() string {
	var b strings.Builder
	for _, p := range Presets() {
		fmt.Fprintf(&b, "  %s\n", p.Name)
		writeWrapped(&b, strings.Fields(p.Summary), "      ", 80)
		fl := []string{"sets:"}
		for _, kv := range p.Flags {
			fl = append(fl, "--"+kv.Name+" "+kv.Value) // a flag and its value on one line
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
