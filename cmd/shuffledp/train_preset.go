package main

import (
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
