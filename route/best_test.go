package route

import (
	"math"
	"strings"
	"testing"

	"github.com/shuffledp/shuffledp/accounting"
	"github.com/shuffledp/shuffledp/approxdp"
	"github.com/shuffledp/shuffledp/event"
)

// TestBestIsMinimumOfRoutes: Best is at most every route it compares and
// equals the smallest; it names the winner; each route value is what its
// own function computes (Account "best" for RDP, approxdp for the
// approximate-DP route, PLD for the PLD route). Table: one shuffle of 2,000
// reports at eps0 = 4 (PLD just below FMT20 numerical; at 100,000 reports,
// ExampleBest, FMT20 wins), a subsampled single round (FMT20 + Ullman 0.00896, PLD
// 0.00893), 300 rounds at g = 1e-3 (PLD below RDP, approximate DP far
// above).
func TestBestIsMinimumOfRoutes(t *testing.T) {
	for _, c := range []struct {
		ev              event.Event
		steps           int64
		delta           float64
		route, winner   string
		atMost, atLeast float64
	}{
		{event.Event{Mechanism: event.Shuffle, N: 2000, Eps0: 4}, 1, 1e-6, RoutePLD, BoundPLD, 2, 0},
		{event.Event{Mechanism: event.SubsampledShuffle, N: 100000, K: 1000, Eps0: 3}, 1, 1e-5, RoutePLD, BoundPLD, 0.0090, 0.0089},
		{event.Event{Mechanism: event.SubsampledShuffle, N: 100000, K: 100, Eps0: 2}, 300, 1e-8, RoutePLD, BoundPLD, 1, 0},
	} {
		r, err := Best([]event.Composed{{Event: c.ev, Count: c.steps}}, c.delta, nil)
		if err != nil {
			t.Fatalf("%v: %v", c.ev, err)
		}
		if r.Route != c.route || r.Winner != c.winner {
			t.Errorf("%v: won by %s/%s, want %s/%s", c.ev, r.Route, r.Winner, c.route, c.winner)
		}
		if r.Epsilon > c.atMost || r.Epsilon < c.atLeast {
			t.Errorf("%v: epsilon %.6g outside [%g, %g]", c.ev, r.Epsilon, c.atLeast, c.atMost)
		}
		if len(r.Routes) != 3 {
			t.Fatalf("%v: %d routes, want rdp, approx-dp and pld", c.ev, len(r.Routes))
		}
		min := math.Inf(1)
		for _, rt := range r.Routes {
			if r.Epsilon > rt.Epsilon {
				t.Errorf("%v: best %.9g above route %s %.9g", c.ev, r.Epsilon, rt.Route, rt.Epsilon)
			}
			min = math.Min(min, rt.Epsilon)
		}
		if r.Epsilon != min {
			t.Errorf("%v: best %.9g, smallest route %.9g", c.ev, r.Epsilon, min)
		}
		// Each route independently.
		acc, err := Account([]event.Composed{{Event: c.ev, Count: c.steps}}, accounting.BoundBest, c.delta, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.Routes[0].Route != RouteRDP || r.Routes[0].Epsilon != acc.Epsilon {
			t.Errorf("%v: rdp route %+v, Account says %.9g", c.ev, r.Routes[0], acc.Epsilon)
		}
		k := c.ev.K
		if k == 0 {
			k = c.ev.N
		}
		comp, err := approxdp.SubsampledShuffle(c.ev.N, k, c.ev.Eps0, c.steps, c.delta, approxdp.ShuffleBest)
		if err != nil {
			t.Fatal(err)
		}
		if ad := r.Routes[1]; ad.Route != RouteApproxDP || math.Abs(ad.Epsilon-comp.Epsilon) > 1e-12*comp.Epsilon {
			t.Errorf("%v: approx-dp route %+v, approxdp says %.12g", c.ev, ad, comp.Epsilon)
		}
		p, err := PLD([]event.Composed{{Event: c.ev, Count: c.steps}}, c.delta)
		if err != nil {
			t.Fatal(err)
		}
		if pr := r.Routes[2]; pr.Route != RoutePLD || pr.Epsilon != p.Upper || !(p.Lower <= p.Upper) {
			t.Errorf("%v: pld route %+v, PLD says %+v", c.ev, pr, p)
		}
	}
}

// TestBestHeterogeneousRoundsRDPOnly: KOV15 composes identical rounds, so a
// run whose rounds differ is accounted by RDP and PLD (which compose any
// rounds) but not by the approximate-DP route, and Best says why.
func TestBestHeterogeneousRoundsRDPOnly(t *testing.T) {
	a := event.Event{Mechanism: event.SubsampledShuffle, N: 10000, K: 100, Eps0: 3}
	b := a
	b.K = 99
	events := []event.Composed{{Event: a, Count: 5}, {Event: b, Count: 1}}
	r, err := Best(events, 1e-5, nil)
	if err != nil {
		t.Fatal(err)
	}
	acc, err := Account(events, accounting.BoundBest, 1e-5, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := PLD(events, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Routes) != 2 || r.Routes[0].Route != RouteRDP || r.Routes[1].Route != RoutePLD || r.Epsilon != math.Min(acc.Epsilon, p.Upper) {
		t.Errorf("heterogeneous rounds: %+v, want min(RDP %.9g, PLD %.9g)", r, acc.Epsilon, p.Upper)
	}
	if len(r.Skipped) != 1 || !strings.Contains(r.Skipped[0], "not all the same event") {
		t.Errorf("skipped %q", r.Skipped)
	}
	// Gaussian events have no approximate-DP route here; their PLD route is
	// the proven Gaussian pair (sigma/2 under replace-one), which beats
	// Cor. 1's RDP.
	g, err := Best([]event.Composed{{Event: event.Event{Mechanism: event.ShuffleGaussian, N: 1000, Sigma: 5, Adjacency: event.AdjacencyReplaceOne}, Count: 3}}, 1e-5, nil)
	if err != nil {
		t.Fatal(err)
	}
	if g.Route != RoutePLD || len(g.Skipped) != 1 || !strings.Contains(g.Skipped[0], "no approximate-DP baseline") || g.Conjecture {
		t.Errorf("gaussian: %+v", g)
	}
}

// TestBestNeverAboveEitherRoute: property over a small grid of settings:
// best <= the RDP route and <= the approximate-DP route, never negative.
func TestBestNeverAboveEitherRoute(t *testing.T) {
	for _, n := range []int64{50, 500} {
		for _, k := range []int64{1, 10, n} {
			for _, eps0 := range []float64{0.5, 5} {
				for _, steps := range []int64{1, 7} {
					ev := event.Event{Mechanism: event.SubsampledShuffle, N: n, K: k, Eps0: eps0}
					r, err := Best([]event.Composed{{Event: ev, Count: steps}}, 1e-6, nil)
					if err != nil {
						t.Fatalf("%v: %v", ev, err)
					}
					if !(r.Epsilon >= 0) {
						t.Fatalf("%v: epsilon %g", ev, r.Epsilon)
					}
					for _, rt := range r.Routes {
						if r.Epsilon > rt.Epsilon {
							t.Errorf("%v x%d: best %g above %s %g", ev, steps, r.Epsilon, rt.Route, rt.Epsilon)
						}
					}
				}
			}
		}
	}
}
