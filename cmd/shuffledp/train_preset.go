package main

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/shuffledp/shuffledp/training"
)

// presetFlags is a pflag.FlagSet as the command line a preset is applied
// to (training.PresetTarget).
type presetFlags struct{ fs *pflag.FlagSet }

// Given implements training.PresetTarget.
func (p presetFlags) Given(name string) (value string, given, ok bool) {
	fl := p.fs.Lookup(name)
	if fl == nil {
		return "", false, false
	}
	return fl.Value.String(), fl.Changed, true
}

// Set implements training.PresetTarget.
func (p presetFlags) Set(name, value string) error { return p.fs.Set(name, value) }

// applyTrainPreset applies the named preset (training.Preset.ApplyTo) to
// the train flags and returns the flags it set.
func applyTrainPreset(fs *pflag.FlagSet, name string) ([]string, error) {
	p, err := training.FindPreset(name)
	if err != nil {
		return nil, err
	}
	return p.ApplyTo(presetFlags{fs})
}

// trainPresetHelp describes every preset for train --help.
func trainPresetHelp() string {
	var b strings.Builder
	for _, p := range training.Presets() {
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
