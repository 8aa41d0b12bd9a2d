package model

import (
	"math"
	"strings"
	"testing"
)

func TestExternalHoldsACopyOfTheta0(t *testing.T) {
	theta := []float64{1, -2, 3.5}
	m, err := NewExternal(theta)
	if err != nil {
		t.Fatal(err)
	}
	theta[0] = 99
	if got := m.Params(); got[0] != 1 || len(got) != 3 || m.NumParams() != 3 || m.Name() != ExternalName {
		t.Fatalf("params %v, n %d, name %q", got, m.NumParams(), m.Name())
	}
	m.Init(NewInitRNG(7))
	if got := m.Params(); got[0] != 1 || got[1] != -2 || got[2] != 3.5 {
		t.Fatalf("Init changed the caller's theta_0: %v", got)
	}
}

func TestExternalRefusesBadTheta0(t *testing.T) {
	for _, tc := range []struct {
		theta []float64
		want  string
	}{
		{nil, "empty"},
		{[]float64{0, math.NaN()}, "parameter 1 is NaN"},
		{[]float64{math.Inf(-1)}, "parameter 0 is -Inf"},
	} {
		if _, err := NewExternal(tc.theta); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewExternal(%v): %v, want an error containing %q", tc.theta, err, tc.want)
		}
	}
}

func TestExternalWorkerPanics(t *testing.T) {
	m, _ := NewExternal([]float64{0})
	defer func() {
		if r := recover(); r == nil {
			t.Fatal("an external model's worker computed a gradient")
		}
	}()
	m.NewWorker().Gradient(nil, 0, []float64{0})
}
