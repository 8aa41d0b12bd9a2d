package calculator

// TEMPORARY development stand-in for the account library function; replaced
// before landing.

import (
	"encoding/json"
	"strconv"

	"github.com/shuffledp/shuffledp/event"
)

func accountJSON(q Query, bound string) ([]byte, error) {
	f := func(k string) float64 { x, _ := strconv.ParseFloat(q.Values[k], 64); return x }
	c := func(k string) int64 { x, _ := ParseCount(q.Values[k]); return x }
	e := event.Event{Mechanism: q.Mechanism, N: c("n"), K: c("k"), Eps0: f("eps0"), Sigma: f("sigma"), Rate: f("rate"), Adjacency: q.Values["adjacency"]}
	if event.IsGaussian(e.Mechanism) || e.Mechanism == event.SampledGaussian {
		if e.Adjacency == "" {
			e.Adjacency = event.DefaultAdjacency(e.Mechanism)
		}
	}
	if err := e.Validate(); err != nil {
		return nil, err
	}
	d, _ := ParseFraction(q.Values["delta"])
	evs := []event.Composed{{Event: e, Count: c("steps")}}
	b, err := event.Best(evs, d, nil)
	if err != nil {
		return nil, err
	}
	best := Row{Bound: "best", Winner: b.Winner, Epsilon: b.Epsilon, Delta: d, Kind: "upper"}
	out := accountOutput{Row: best, Steps: c("steps")}
	if bound == "all" {
		out.All = []Row{best}
		if event.IsLDP(e.Mechanism) {
			ci, err := event.CertifiedInterval(evs, d)
			if err == nil {
				out.All = append(out.All, Row{Bound: "certified", Epsilon: ci.Lower, Kind: "certified-lower", Interval: []float64{ci.Lower, ci.Upper}, Ratio: ci.Ratio, Witness: ci.Witness, UpperBound: ci.UpperBound})
			}
		}
	}
	return json.Marshal(out)
}
