package training

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// fakeFlags is a command line of flags, some given.
type fakeFlags struct {
	values map[string]string
	given  map[string]bool
}

func (f *fakeFlags) Given(name string) (string, bool, bool) {
	v, ok := f.values[name]
	return v, f.given[name], ok
}

func (f *fakeFlags) Set(name, value string) error {
	f.values[name], f.given[name] = value, true
	return nil
}

func newFakeFlags(given map[string]string) *fakeFlags {
	f := &fakeFlags{values: map[string]string{}, given: map[string]bool{}}
	for _, p := range Presets() {
		for _, kv := range p.Flags {
			f.values[kv.Name] = "default"
		}
	}
	for k, v := range given {
		f.values[k], f.given[k] = v, true
	}
	return f
}

// TestPresetApplyTo: a preset sets every flag not given, an explicit flag
// wins, linf-clip is left alone when clip-norm was given with another
// norm, and a flag the command lacks or an unknown preset is an error.
func TestPresetApplyTo(t *testing.T) {
	cases := []struct {
		preset   string
		given    map[string]string
		want     map[string]string
		notSet   []string
		errMatch string
	}{
		{"neurips21-fig3", nil, map[string]string{"randomizer": "rinf", "linf-clip": "clamp", "sample": "10000", "lr": "0.3,70:0.18"}, nil, ""},
		{"neurips21-fig3", map[string]string{"sample": "500"}, map[string]string{"sample": "500", "eps0": "1.5"}, []string{"sample"}, ""},
		{"neurips21-fig3", map[string]string{"randomizer": "r1", "clip-norm": "l1"}, map[string]string{"linf-clip": "default", "clip-norm": "l1"}, []string{"linf-clip", "clip-norm", "randomizer"}, ""},
		{"neurips21-fig3", map[string]string{"clip-norm": "linf"}, map[string]string{"linf-clip": "clamp"}, []string{"clip-norm"}, ""},
		{"neurips21-fig6", nil, map[string]string{"randomizer": "djw", "sample": "2000", "clip-norm": "l2"}, nil, ""},
		{"neurips21-fig5", nil, nil, nil, "preset must be one of neurips21-fig3, neurips21-fig3-tuned, neurips21-fig6"},
	}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.preset, c.given), func(t *testing.T) {
			p, err := FindPreset(c.preset)
			if c.errMatch != "" {
				if err == nil || !strings.Contains(err.Error(), c.errMatch) {
					t.Fatalf("error %v, want %q", err, c.errMatch)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			fl := newFakeFlags(c.given)
			set, err := p.ApplyTo(fl)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range c.want {
				if fl.values[k] != v {
					t.Errorf("--%s = %q, want %q", k, fl.values[k], v)
				}
			}
			for _, k := range c.notSet {
				if slices.Contains(set, k) {
					t.Errorf("preset set --%s, which it must leave alone", k)
				}
			}
		})
	}
	p, _ := FindPreset("neurips21-fig3")
	fl := newFakeFlags(nil)
	delete(fl.values, "ema")
	p.Flags = append(p.Flags, PresetFlag{"ema", "0.9"})
	if _, err := p.ApplyTo(fl); err == nil || !strings.Contains(err.Error(), "no flag --ema") {
		t.Errorf("a preset flag the command lacks: %v", err)
	}
	// Presets returns copies: changing one changes no preset.
	ps := Presets()
	ps[0].Flags[0].Value = "mlp"
	if Presets()[0].Flags[0].Value == "mlp" {
		t.Error("Presets shares its flags with the registry")
	}
}

// ExampleFindPreset lists what the NeurIPS'21 Fig. 6 preset sets.
func ExampleFindPreset() {
	p, err := FindPreset("neurips21-fig6")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, kv := range p.Flags[:4] {
		fmt.Printf("--%s %s\n", kv.Name, kv.Value)
	}
	// Output:
	// --model cnn-tanh
	// --clients 60000
	// --sample 2000
	// --randomizer djw
}

// TestPresetHelpListsEveryFlag: PresetHelp names every preset and every
// flag it sets with its value on one line, and no line passes 80 columns
// unless it is one word.
func TestPresetHelpListsEveryFlag(t *testing.T) {
	h := PresetHelp()
	for _, p := range Presets() {
		if !strings.Contains(h, "  "+p.Name+"\n") {
			t.Errorf("help lacks preset %s", p.Name)
		}
		for _, kv := range p.Flags {
			if !strings.Contains(h, "--"+kv.Name+" "+kv.Value) {
				t.Errorf("help lacks %s's --%s %s on one line", p.Name, kv.Name, kv.Value)
			}
		}
	}
	for _, l := range strings.Split(h, "\n") {
		if len(l) > 80 && len(strings.Fields(l)) > 1 {
			t.Errorf("line of %d columns: %q", len(l), l)
		}
	}
}
