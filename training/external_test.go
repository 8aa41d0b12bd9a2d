package training

import (
	"strings"
	"testing"

	"github.com/shuffledp/shuffledp/model"
	"github.com/shuffledp/shuffledp/server"
)

// An external model trains only over the network and with the caller's
// step; WithExternal is refused for a Go model.
func TestExternalModelChecks(t *testing.T) {
	ext, err := model.NewExternal([]float64{0, 0, 0})
	if err != nil {
		t.Fatal(err)
	}
	step := server.Update(func(_, _, _ []float64) error { return nil })
	train := blobs(600, 10, 4, 1, 1)
	cfg := baseConfig(t)
	cfg.Randomizer, cfg.Eps0 = "rinf", 2
	for _, tc := range []struct {
		name string
		m    model.Model
		opts []Option
		want string
	}{
		{"no step", ext, nil, "server's update function is required"},
		{"simulated", ext, []Option{WithExternal(step, nil)}, "only a networked run"},
		{"go model", newLogReg(t, 10, 4), []Option{WithExternal(step, nil)}, "WithExternal is for the external model"},
	} {
		if _, err := New(cfg, tc.m, train, nil, tc.opts...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
}
