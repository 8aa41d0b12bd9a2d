package route

import (
	"math"
	"testing"

	"github.com/shuffledp/shuffledp/event"
)

// FuzzEvent decodes an event from JSON, validates it and, when valid,
// builds every applicable bound's curve and the epsilon of a few rounds:
// nothing panics, an RDP value or epsilon is never NaN, infinite or
// negative (an error instead), and an invalid event never yields a curve.
// Populations are capped at 1e4 so that one input stays fast.
func FuzzEvent(f *testing.F) {
	for _, s := range []string{
		`{"mechanism":"subsampled-shuffle","n":60000,"k":10000,"eps0":1.5}`,
		`{"mechanism":"shuffle","n":100,"eps0":30}`,
		`{"mechanism":"subsampled-shuffle","n":10,"k":10,"eps0":0}`,
		`{"mechanism":"shuffle-gaussian","n":1000,"sigma":0.3}`,
		`{"mechanism":"subsampled-shuffle-gaussian","n":1000,"k":3,"sigma":5}`,
		`{"mechanism":"checkin-gaussian","n":500,"rate":0.01,"sigma":1}`,
		`{"mechanism":"checkin-gaussian","n":500,"rate":1e-300,"sigma":1e-300}`,
		`{"mechanism":"shuffle","n":3,"eps0":700}`,
		`{"mechanism":"shuffle","n":-1}`,
	} {
		f.Add([]byte(s), int64(10))
	}
	f.Fuzz(func(t *testing.T, data []byte, count int64) {
		e, err := event.Parse(data)
		if err != nil {
			if _, cerr := Curve(e, ""); cerr == nil && e.Validate() != nil {
				t.Fatalf("invalid event %+v yields a curve", e)
			}
			return
		}
		if e.N > 10000 {
			return
		}
		orders := []float64{1.5, 2, 3, 16, 64}
		for _, b := range Bounds(e) {
			c, err := Curve(e, b.Name)
			if err != nil {
				continue
			}
			for _, o := range orders {
				v, err := c.RDP(o)
				if err == nil && (math.IsNaN(v) || math.IsInf(v, 0) || v < 0) {
					t.Fatalf("%s %s at order %g: %g", e, b.Name, o, v)
				}
			}
		}
		count = count % 1000
		if count < 0 {
			count = -count
		}
		g, err := Epsilon([]event.Composed{{Event: e, Count: count}}, "", 1e-6, orders)
		if err == nil && (math.IsNaN(g.Epsilon) || math.IsInf(g.Epsilon, 0) || g.Epsilon < 0) {
			t.Fatalf("%s x%d: epsilon %g", e, count, g.Epsilon)
		}
	})
}
