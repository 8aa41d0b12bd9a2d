package route

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/shuffledp/shuffledp/accounting"
	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/sampledgauss"
)

// TestSampledGaussianCurves: mtz19 is package sampledgauss's curve, best
// equals it and names it, gaussian-cor1 is lambda/(2 sigma^2), and an
// unknown bound lists the valid ones.
func TestSampledGaussianCurves(t *testing.T) {
	e := event.Event{Mechanism: event.SampledGaussian, Rate: 0.01, Sigma: 1.3}
	var names []string
	for _, b := range Bounds(e) {
		names = append(names, b.Name)
		if b.Lower {
			t.Errorf("%s is marked a lower bound", b.Name)
		}
	}
	if want := []string{BoundMTZ19, BoundGaussianCor1, accounting.BoundBest}; !slices.Equal(names, want) {
		t.Fatalf("Bounds() = %v, want %v", names, want)
	}
	ref, _ := sampledgauss.New(e.Rate, e.Sigma)
	mtz, err1 := Curve(e, BoundMTZ19)
	best, err2 := Curve(e, "")
	cor1, err3 := Curve(e, BoundGaussianCor1)
	if err := errors.Join(err1, err2, err3); err != nil {
		t.Fatal(err)
	}
	for _, o := range []float64{1.25, 2, 7.5, 64, 1000} {
		want, _ := ref.RDP(o)
		a, _ := mtz.RDP(o)
		b, _ := best.RDP(o)
		c, _ := cor1.RDP(o)
		if a != want || b != want {
			t.Errorf("order %g: mtz19 %g, best %g, sampledgauss %g", o, a, b, want)
		}
		if g := o / (2 * e.Sigma * e.Sigma); c < g || c > g*(1+1e-14) || c < a {
			t.Errorf("order %g: gaussian-cor1 %g, want %g (>= mtz19 %g)", o, c, g, a)
		}
		if _, w, err := best.(winnerCurve).RDPWinner(o); err != nil || w != BoundMTZ19 {
			t.Errorf("order %g: best won by %q, %v", o, w, err)
		}
	}
	if again, _ := Curve(e, BoundMTZ19); again != mtz {
		t.Error("the curve is not memoised")
	}
	var unknown *UnknownBoundError
	if _, err := Curve(e, BoundICLR23Thm1); !errors.As(err, &unknown) || !slices.Equal(unknown.Valid, names) {
		t.Errorf("Curve(%s) = %v, want UnknownBoundError listing %v", BoundICLR23Thm1, err, names)
	}
}

// TestSampledGaussianEpsilon: Epsilon is accounting's Accountant over the
// default grid composing sampledgauss's curve T times, rests on no
// assumption, and composes with shuffle-model events.
func TestSampledGaussianEpsilon(t *testing.T) {
	e := event.Event{Mechanism: event.SampledGaussian, N: 60000, Rate: 256.0 / 60000, Sigma: 1.1}
	res, err := Account([]event.Composed{{Event: e, Count: 14063}}, "", 1e-5, nil)
	if err != nil {
		t.Fatal(err)
	}
	acct, _ := accounting.NewAccountant(accounting.DefaultOrders())
	sg, _ := sampledgauss.New(e.Rate, e.Sigma)
	if err := acct.Compose(sg, 14063); err != nil {
		t.Fatal(err)
	}
	want, err := acct.Epsilon(1e-5)
	if err != nil {
		t.Fatal(err)
	}
	if res.Epsilon != want.Epsilon || res.Order != want.Order {
		t.Errorf("Account: epsilon %v at order %v; Accountant: %v at %v", res.Epsilon, res.Order, want.Epsilon, want.Order)
	}
	if res.Assumption != "" || res.Lower || res.Winner != BoundMTZ19 || res.Rounds != 14063 {
		t.Errorf("Account: %+v", res)
	}
	// Heterogeneous: a central phase then a shuffle-model phase.
	mixed := []event.Composed{{Event: e, Count: 1000},
		{Event: event.Event{Mechanism: event.SubsampledShuffleGaussian, N: 60000, K: 60, Sigma: 0.86}, Count: 1000}}
	g, err := Epsilon(mixed, "", 1e-5, nil)
	if err != nil || !(g.Epsilon > 0) || math.IsInf(g.Epsilon, 0) {
		t.Errorf("mixed: %+v, %v", g, err)
	}
	g1, _ := Epsilon(mixed[:1], "", 1e-5, nil)
	if !(g.Epsilon > g1.Epsilon) {
		t.Errorf("mixed epsilon %g not above the central phase's %g", g.Epsilon, g1.Epsilon)
	}
}

// TestSampledGaussianExtremes: at the edges of the valid parameters every
// bound's RDP is finite and non-negative or an error, and Epsilon is finite
// and non-negative or an error (FuzzEvent's property for this mechanism).
func TestSampledGaussianExtremes(t *testing.T) {
	for _, e := range []event.Event{
		{Mechanism: event.SampledGaussian, Rate: 1e-300, Sigma: event.MinSigma},
		{Mechanism: event.SampledGaussian, Rate: 1e-300, Sigma: 1e100},
		{Mechanism: event.SampledGaussian, Rate: 1, Sigma: event.MinSigma},
		{Mechanism: event.SampledGaussian, Rate: 1, Sigma: 1e100},
		{Mechanism: event.SampledGaussian, Rate: 0.5, Sigma: 1e-3},
		{Mechanism: event.SampledGaussian, Rate: 1 - 1e-16, Sigma: 0.2},
		{Mechanism: event.SampledGaussian, Rate: 5e-324, Sigma: 1},
	} {
		if err := e.Validate(); err != nil {
			t.Fatalf("%s: %v", e, err)
		}
		for _, b := range Bounds(e) {
			c, err := Curve(e, b.Name)
			if err != nil {
				t.Fatalf("%s %s: %v", e, b.Name, err)
			}
			for _, o := range []float64{1.01, 1.5, 2, 3.5, 16, 64, 4096} {
				v, err := c.RDP(o)
				if err == nil && (math.IsNaN(v) || math.IsInf(v, 0) || v < 0) {
					t.Errorf("%s %s at order %g: %g", e, b.Name, o, v)
				}
				if err != nil && !errors.Is(err, accounting.ErrOrderUnsupported) {
					t.Errorf("%s %s at order %g: %v", e, b.Name, o, err)
				}
			}
		}
		g, err := Epsilon([]event.Composed{{Event: e, Count: 1000}}, "", 1e-6, nil)
		if err == nil && (math.IsNaN(g.Epsilon) || math.IsInf(g.Epsilon, 0) || g.Epsilon < 0) {
			t.Errorf("%s: epsilon %g", e, g.Epsilon)
		}
	}
}
