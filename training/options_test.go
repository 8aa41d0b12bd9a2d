package training

import (
	"strings"
	"testing"

	"github.com/shuffledp/shuffledp/server"
)

// smallOptions are valid options of a small private run.
func smallOptions() Options {
	return Options{Dataset: "synthetic", Model: "logreg", Clients: 200, Sample: 20, Randomizer: RandomizerRInf,
		LinfClip: "scale", Clip: 0.1, Eps0: 2, Delta: 1e-5, Epochs: 1, LR: "0.5", Seed: 1,
		Optimizer: server.OptimizerSGD, Momentum: 0.9, AdamBetas: "0.9,0.999", AdamEps: 1e-8, LRDecay: DecayNone,
		Gaussian: GaussianOptions{Participation: ParticipationSample}}
}

// TestOptionsConfig checks that valid options give the Config they state
// and that each invalid one is refused naming its flag.
func TestOptionsConfig(t *testing.T) {
	none := func(string) bool { return false }
	cfg, err := smallOptions().Config(none, []string{"shuffledp", "train"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Clients != 200 || cfg.Sample != 20 || cfg.Eps0 != 2 || cfg.ClampLinf || cfg.EvalSet != "" || len(cfg.Command) != 2 {
		t.Fatalf("config %+v", cfg)
	}
	for _, tc := range []struct {
		edit  func(*Options)
		given string
		want  string
	}{
		{func(o *Options) { o.LR = "x" }, "", "lr"},
		{func(o *Options) { o.LinfClip = "cut" }, "", "linf-clip must be scale or clamp"},
		{func(o *Options) { o.Optimizer = server.OptimizerAdam; o.AdamBetas = "0.9" }, "", "adam-betas must be B1,B2"},
		{func(o *Options) {}, "momentum", "momentum applies to --optimizer momentum or nesterov"},
		{func(o *Options) {}, "adam-eps", "adam-eps apply to --optimizer adam"},
		{func(o *Options) {}, "sigma", "sigma applies to --randomizer gaussian"},
		{func(o *Options) { o.Eps0 = -1 }, "", "eps0"},
	} {
		o := smallOptions()
		tc.edit(&o)
		given := func(f string) bool { return f == tc.given }
		if _, err := o.Config(given, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want one containing %q", err, tc.want)
		}
	}
	o := smallOptions()
	o.Optimizer, o.LinfClip, o.Validation = server.OptimizerAdam, "clamp", 10
	if cfg, err = o.Config(none, nil); err != nil || cfg.Optimizer.Beta2 != 0.999 || !cfg.ClampLinf || cfg.EvalSet != "validation" {
		t.Fatalf("adam, clamp, validation: %+v, %v", cfg, err)
	}
	if s := o.DataSpec(); s.Name != "synthetic" || s.Clients != 200 || s.Validation != 10 {
		t.Errorf("data spec %+v", s)
	}
}
