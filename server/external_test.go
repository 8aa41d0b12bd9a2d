package server

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/shuffledp/shuffledp/model"
	"github.com/shuffledp/shuffledp/protocol"
)

// newExternalServer is newServer's run with Config.Update in place of the
// optimizer, over an external model holding theta0.
func newExternalServer(t *testing.T, theta0 []float64, up Update) *Server {
	t.Helper()
	m, err := model.NewExternal(theta0)
	if err != nil {
		t.Fatal(err)
	}
	cfg := protocol.RunConfig{Run: "run", Model: model.ExternalName, Dim: m.NumParams(), Randomizer: "rinf", ClipNorm: protocol.NormLInf,
		Clip: 0.5, Eps0: 2, Population: 20, PerRound: 5, MinBatch: 3}
	r, err := protocol.NewRandomizer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ReportBytes = r.ReportSize()
	s, err := New(Config{Run: cfg, LR: constLR(1), Opener: protocol.Plaintext{}, Update: up}, m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The external step receives the mean the optimizer would step on: with
// next = theta - mean it takes SGD's step at learning rate 1, bit for bit.
func TestExternalUpdateGetsTheMean(t *testing.T) {
	sgd, m, r := newServer(t, "rinf", protocol.Plaintext{}, nil, constLR(1), 0)
	theta0 := append([]float64(nil), m.Params()...)
	for i := range theta0 {
		theta0[i] = 0.1 * float64(i)
	}
	copy(m.Params(), theta0)
	var calls int
	var gotMean []float64
	ext := newExternalServer(t, theta0, func(theta, mean, next []float64) error {
		calls++
		gotMean = append([]float64(nil), mean...)
		for i := range next {
			next[i] = theta[i] - mean[i]
		}
		return nil
	})
	b := protocol.Batch{Run: "run", Round: 1, Reports: reports(t, r, 5, 3)}
	if _, err := sgd.Receive(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	st, err := ext.Receive(context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	if calls != 1 || st.Step != 1 || st.Reports != 5 || ext.Steps() != 1 {
		t.Fatalf("calls %d, step %+v, steps %d", calls, st, ext.Steps())
	}
	for i, x := range ext.Model().Params {
		if x != m.Params()[i] {
			t.Fatalf("param %d: external %v, SGD at lr 1 %v", i, x, m.Params()[i])
		}
		if want := theta0[i] - m.Params()[i]; math.Abs(gotMean[i]-want) > 1e-12 {
			t.Fatalf("mean %d: %v, want %v", i, gotMean[i], want)
		}
	}
}

func TestExternalUpdateRefusals(t *testing.T) {
	_, _, r := newServer(t, "rinf", protocol.Plaintext{}, nil, constLR(1), 0)
	theta0 := make([]float64, r.Dim())
	for _, tc := range []struct {
		name string
		up   Update
		want string
	}{
		{"nan", func(_, _, next []float64) error { next[2] = math.NaN(); return nil }, "server update function returned NaN at index 2"},
		{"inf", func(_, _, next []float64) error { next[0] = math.Inf(1); return nil }, "returned +Inf at index 0"},
		{"error", func(_, _, _ []float64) error { return errors.New("boom") }, "the server update function: boom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newExternalServer(t, theta0, tc.up)
			_, err := s.Receive(context.Background(), protocol.Batch{Run: "run", Round: 1, Reports: reports(t, r, 5, 3)})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
			if s.Steps() != 0 {
				t.Fatalf("a refused update stepped")
			}
			for i, x := range s.Model().Params {
				if x != 0 {
					t.Fatalf("a refused update changed parameter %d to %v", i, x)
				}
			}
		})
	}
}
