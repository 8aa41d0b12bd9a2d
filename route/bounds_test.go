package route

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/shuffledp/shuffledp/accounting"
	"github.com/shuffledp/shuffledp/event"
)

// TestBounds: the LDP bounds are accounting's (a bound added there appears
// here), ccs21-lower only where accounting accepts it, lower bounds marked
// as accounting marks them, every bound described, "best" last.
func TestBounds(t *testing.T) {
	for _, e := range []event.Event{
		{Mechanism: event.Shuffle, N: 100, Eps0: 1},
		{Mechanism: event.SubsampledShuffle, N: 100, K: 10, Eps0: 1},
		{Mechanism: event.ShuffleGaussian, N: 100, Sigma: 2},
		{Mechanism: event.SubsampledShuffleGaussian, N: 100, K: 10, Sigma: 2},
		{Mechanism: event.CheckinGaussian, N: 100, Rate: 0.1, Sigma: 2},
	} {
		bs := Bounds(e)
		if len(bs) < 2 || bs[len(bs)-1].Name != accounting.BoundBest {
			t.Errorf("%s: bounds %v, want best last", e, bs)
		}
		for _, b := range bs {
			if b.Description == "" {
				t.Errorf("%s: bound %s has no description", e, b.Name)
			}
			c, err := Curve(e, b.Name)
			if err != nil {
				t.Errorf("%s: Curve(%s): %v", e, b.Name, err)
				continue
			}
			if accounting.IsLower(c) != b.Lower {
				t.Errorf("%s: %s: Lower %v, curve says %v", e, b.Name, b.Lower, accounting.IsLower(c))
			}
		}
		if !event.IsLDP(e.Mechanism) {
			continue
		}
		var want []string
		for _, name := range accounting.BoundNames() {
			if _, err := accounting.NewBound(e.Mechanism, name, e.N, e.Reports(), e.Eps0); err == nil {
				want = append(want, name)
			}
		}
		if got := boundNames(e); !slices.Equal(got, want) {
			t.Errorf("%s: bounds %v, accounting constructs %v", e, got, want)
		}
	}
	if Bounds(event.Event{Mechanism: "nope"}) != nil {
		t.Error("bounds of an unknown mechanism")
	}
}

func TestCurveErrors(t *testing.T) {
	e := event.Event{Mechanism: event.ShuffleGaussian, N: 100, Sigma: 2}
	_, err := Curve(e, accounting.BoundNeurIPS21Upper)
	var ub *UnknownBoundError
	if !errors.As(err, &ub) || !slices.Equal(ub.Valid, []string{BoundGaussianCor1, BoundICLR23Thm1, BoundBestConjecture, accounting.BoundBest}) ||
		!strings.Contains(err.Error(), "--bound") {
		t.Errorf("Gaussian event, LDP bound: %v", err)
	}
	l := event.Event{Mechanism: event.SubsampledShuffle, N: 100, K: 10, Eps0: 1}
	_, err = Curve(l, BoundICLR23Thm1)
	if !errors.As(err, &ub) || !slices.Contains(ub.Valid, accounting.BoundClonesRDP) {
		t.Errorf("LDP event, Gaussian bound: %v", err)
	}
	if _, err := Curve(l, accounting.BoundCCS21Lower); err == nil {
		t.Error("ccs21-lower accepted for k < n")
	}
	if _, err := Curve(event.Event{Mechanism: event.Shuffle, N: 0}, ""); err == nil || !strings.HasPrefix(err.Error(), "--n") {
		t.Errorf("invalid event: %v", err)
	}
	c, err := Curve(l, "")
	if err != nil || c.Name() != accounting.BoundBest {
		t.Errorf(`Curve(""): %v, %v; want best`, c, err)
	}
}
