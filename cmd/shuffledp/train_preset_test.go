package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/shuffledp/shuffledp/cliflag"
	"github.com/shuffledp/shuffledp/training"
)

// flagValues returns every train flag's value after parsing args and,
// with preset, applying it.
func flagValues(t *testing.T, preset string, args ...string) map[string]string {
	t.Helper()
	cmd := newTrainCmd()
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatal(err)
	}
	if preset != "" {
		p, err := training.FindPreset(preset)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.ApplyTo(cliflag.Target{FS: cmd.Flags()}); err != nil {
			t.Fatal(err)
		}
	}
	m := map[string]string{}
	cmd.Flags().VisitAll(func(fl *pflag.Flag) { m[fl.Name] = fl.Value.String() })
	return m
}

// TestTrainPresetExpands: each preset sets exactly the paper's values
// (the same flags as writing them out by hand, every other flag at its
// default), and a flag given explicitly wins.
func TestTrainPresetExpands(t *testing.T) {
	want := map[string][]string{
		"neurips21-fig3": {"--model", "cnn-tanh", "--clients", "60000", "--sample", "10000", "--randomizer", "rinf",
			"--clip-norm", "linf", "--linf-clip", "clamp", "--clip", "0.01", "--eps0", "1.5", "--delta", "1e-5",
			"--epochs", "200", "--lr", "0.3,70:0.18"},
		"neurips21-fig3-tuned": {"--model", "cnn-tanh", "--clients", "60000", "--sample", "10000", "--randomizer", "rinf",
			"--clip-norm", "linf", "--linf-clip", "clamp", "--clip", "0.01", "--eps0", "1.5", "--delta", "1e-5",
			"--epochs", "200", "--lr", "0.4", "--lr-decay", "cosine:180:0.25", "--ema", "0.99"},
		"neurips21-fig6": {"--model", "cnn-tanh", "--clients", "60000", "--sample", "2000", "--randomizer", "djw",
			"--clip-norm", "l2", "--clip", "0.005", "--eps0", "2", "--delta", "1e-5",
			"--epochs", "300", "--lr", "12,30:5,60:4,100:3.5,140:3,190:2"},
	}
	if len(training.Presets()) != len(want) {
		t.Fatalf("%d presets, the test knows %d", len(training.Presets()), len(want))
	}
	for name, explicit := range want {
		t.Run(name, func(t *testing.T) {
			got := flagValues(t, name)
			hand := flagValues(t, "", explicit...)
			for fl, v := range hand {
				if fl != "preset" && got[fl] != v {
					t.Errorf("--%s: preset gives %q, the paper's setting is %q", fl, got[fl], v)
				}
			}
			// An explicit flag wins, whatever its position.
			over := flagValues(t, name, "--sample", "5000", "--lr", "0.1", "--optimizer", "adam")
			if over["sample"] != "5000" || over["lr"] != "0.1" || over["optimizer"] != "adam" || over["model"] != "cnn-tanh" {
				t.Errorf("explicit flags lost: sample %s, lr %s, optimizer %s, model %s", over["sample"], over["lr"], over["optimizer"], over["model"])
			}
		})
	}
	// The R_1 variant of Fig. 3's stated setting: with --clip-norm l1 the
	// preset's l_inf clip rule is not applied (it would be refused), with
	// --clip-norm linf given explicitly it is.
	def := flagValues(t, "")["linf-clip"]
	if got := flagValues(t, "neurips21-fig3", "--randomizer", "r1", "--clip-norm", "l1")["linf-clip"]; got != def {
		t.Errorf("--preset neurips21-fig3 --clip-norm l1: --linf-clip %q, want the default %q", got, def)
	}
	if got := flagValues(t, "neurips21-fig3", "--clip-norm", "linf")["linf-clip"]; got != "clamp" {
		t.Errorf("--preset neurips21-fig3 --clip-norm linf: --linf-clip %q, want clamp", got)
	}
	if _, err := runTrainCmd(t, "--preset", "neurips21-fig5", "--no-progress"); err == nil || !strings.Contains(err.Error(), "preset") {
		t.Errorf("unknown preset: error %v, want one naming preset", err)
	}
	help, err := runTrainCmd(t, "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range training.Presets() {
		for _, kv := range p.Flags {
			if !strings.Contains(help, "--"+kv.Name+" "+kv.Value) {
				t.Errorf("train --help does not list that %s sets --%s %s", p.Name, kv.Name, kv.Value)
			}
		}
	}
	if !strings.Contains(help, "privacy guarantee and\nits accounting are unchanged") {
		t.Error("train --help does not say that post-processing leaves the accounting unchanged")
	}
}

// TestTrainPresetRuns: a preset run (made small by explicit flags) trains
// the authors' network with the preset's randomizer and clipping, and its
// recorded command line spells out every value the preset set.
func TestTrainPresetRuns(t *testing.T) {
	metrics := filepath.Join(t.TempDir(), "m.jsonl")
	out, err := runTrainCmd(t, "--preset", "neurips21-fig3", "--dataset", "synthetic", "--clients", "120", "--sample", "60",
		"--epochs", "1", "--test-size", "50", "--no-progress", "--metrics", metrics)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	recs := readRecords(t, metrics)
	last := recs[len(recs)-1]
	if last["model"] != "cnn-tanh" || last["randomizer"] != "rinf" || last["clip_norm"] != "linf" || last["linf_clamp"] != true ||
		last["clip"] != 0.01 || last["eps0"] != 1.5 || last["sample"] != 60.0 || last["round"] != 2.0 {
		t.Errorf("preset run record: %v", last)
	}
	var cmdline []string
	for _, a := range last["command"].([]any) {
		cmdline = append(cmdline, a.(string))
	}
	for _, a := range []string{"--preset=neurips21-fig3", "--model=cnn-tanh", "--clients=120", "--lr=0.3,70:0.18", "--linf-clip=clamp"} {
		if !slices.Contains(cmdline, a) {
			t.Errorf("command %v lacks %s", cmdline, a)
		}
	}
}

// TestTrainPostProcessing: the server's optimizer, EMA and schedule flags
// reach the run (records carry the averaged model's accuracy and the
// optimizer), bad values are refused naming the flag, and a state
// directory records the post-processing flags only when they are not at
// their defaults (so runs started before they existed resume).
func TestTrainPostProcessing(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "run")
	args := append(append([]string{}, small...), "--epochs", "1", "--optimizer", "adam", "--adam-betas", "0.8,0.99",
		"--ema", "0.9", "--lr", "0.05", "--lr-warmup", "0.5", "--lr-decay", "cosine:1", "--state", state)
	if out, err := runTrainCmd(t, args...); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	recs := readRecords(t, filepath.Join(state, "metrics.jsonl"))
	for i, r := range recs {
		if _, ok := r["test_accuracy_ema"].(float64); !ok || r["optimizer"] != "adam(0.8,0.99,1e-08)" || r["ema"] != 0.9 {
			t.Errorf("record %d: test_accuracy_ema %v, optimizer %v, ema %v", i, r["test_accuracy_ema"], r["optimizer"], r["ema"])
		}
	}
	// Round 10 is the last of the epoch: warm-up done (5 rounds), cosine
	// at e = 0.9 of END 1.
	if lr := recs[len(recs)-1]["lr"].(float64); lr != 0.05*((1+math.Cos(math.Pi*0.9))/2) {
		t.Errorf("last lr %v", lr)
	}
	manifest := func(path string) map[string]string {
		raw, err := os.ReadFile(filepath.Join(path, "run.json"))
		if err != nil {
			t.Fatal(err)
		}
		var m struct{ Flags map[string]string }
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		return m.Flags
	}
	if f := manifest(state); f["optimizer"] != "adam" || f["adam-betas"] != "0.8,0.99" || f["ema"] != "0.9" || f["lr-decay"] != "cosine:1" ||
		f["lr-warmup"] != "0.5" || f["momentum"] != "" || f["preset"] != "" {
		t.Errorf("manifest flags %v", f)
	}
	// A rerun with another optimizer is refused, naming it.
	other := append(append([]string{}, small...), "--epochs", "1", "--optimizer", "momentum", "--ema", "0.9", "--lr", "0.05",
		"--lr-warmup", "0.5", "--lr-decay", "cosine:1", "--state", state)
	if _, err := runTrainCmd(t, other...); err == nil || !strings.Contains(err.Error(), "optimizer") || !strings.Contains(err.Error(), "momentum") {
		t.Errorf("rerun with another optimizer: %v", err)
	}
	plain := filepath.Join(dir, "plain")
	if out, err := runTrainCmd(t, append(append([]string{}, small...), "--epochs", "0.5", "--state", plain)...); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for fl := range training.LaterFlags {
		if _, ok := manifest(plain)[fl]; ok {
			t.Errorf("a run at the defaults records --%s", fl)
		}
	}

	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"--optimizer", "rmsprop"}, "optimizer"},
		{[]string{"--optimizer", "momentum", "--momentum", "1"}, "momentum"},
		{[]string{"--momentum", "0.5"}, "momentum"}, // with sgd
		{[]string{"--optimizer", "adam", "--adam-betas", "0.9"}, "adam-betas"},
		{[]string{"--optimizer", "adam", "--adam-betas", "0.9,1"}, "adam-betas"},
		{[]string{"--optimizer", "adam", "--adam-eps", "0"}, "adam-eps"},
		{[]string{"--optimizer", "nesterov", "--adam-eps", "1e-6"}, "adam-eps"},
		{[]string{"--ema", "1"}, "ema"},
		{[]string{"--ema", "-0.5"}, "ema"},
		{[]string{"--lr-warmup", "-1"}, "lr-warmup"},
		{[]string{"--lr-decay", "cosine"}, "lr-decay"},
		{[]string{"--lr-decay", "step:10:2"}, "lr-decay"},
	} {
		_, err := runTrainCmd(t, append(append([]string{}, small...), tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.flag) {
			t.Errorf("%v: error %v, want one naming %q", tc.args, err, tc.flag)
		}
	}
}

// TestTrainEpsilonNeurIPS21AgreesWithAccount: every record's
// epsilon_neurips21 is what `account --bound neurips21-upper` gives for
// its rounds, and never below epsilon.
func TestTrainEpsilonNeurIPS21AgreesWithAccount(t *testing.T) {
	metrics := filepath.Join(t.TempDir(), "m.jsonl")
	if out, err := runTrainCmd(t, append(append([]string{}, small...), "--epochs", "2", "--eval-every", "7", "--metrics", metrics)...); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	recs := readRecords(t, metrics)
	if len(recs) != 4 { // rounds 0, 7, 14, 20
		t.Fatalf("%d records", len(recs))
	}
	for _, r := range recs[1:] {
		acc, err := runCmd(t, newAccountCmd, "--bound", "rdp-best", "--n", "200", "--k", "20", "--eps0", "2", "--steps", fmt.Sprint(r["round"]),
			"--delta", "1e-5", "--bound", "neurips21-upper", "--json")
		if err != nil {
			t.Fatalf("%v\n%s", err, acc)
		}
		var a struct {
			Epsilon float64 `json:"epsilon"`
		}
		if err := json.Unmarshal([]byte(acc), &a); err != nil {
			t.Fatalf("%v\n%s", err, acc)
		}
		got, ok := r["epsilon_neurips21"].(float64)
		if !ok || got != a.Epsilon || got < r["epsilon"].(float64) {
			t.Errorf("round %v: epsilon_neurips21 %v, account --bound neurips21-upper %v, epsilon %v", r["round"], r["epsilon_neurips21"], a.Epsilon, r["epsilon"])
		}
	}
}
