package account

import "testing"

// BenchmarkAccountDefault is `shuffledp account` without flags: every
// bound at the NeurIPS'21 Fig. 2a setting (rows, pld, certified interval,
// baselines). delta moves by 1e-12 relative each iteration, so that no
// iteration reuses another's memoised compositions (package route) while
// the rows of one iteration share theirs as the command's do.
func BenchmarkAccountDefault(b *testing.B) {
	for i := range b.N {
		req := Defaults()
		req.Bound = BoundAll
		req.Delta = 1e-8 * (1 + float64(i)*1e-12)
		a, err := Evaluate(req)
		if err != nil {
			b.Fatal(err)
		}
		if len(a.Rows) < 10 {
			b.Fatalf("%d rows", len(a.Rows))
		}
	}
}
