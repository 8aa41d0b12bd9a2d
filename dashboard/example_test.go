package dashboard_test

import (
	"fmt"
	"time"

	"github.com/shuffledp/shuffledp/dashboard"
	"github.com/shuffledp/shuffledp/metrics"
)

// A server's page hears every applied round and every evaluation; what it
// shows is its State (served as JSON at /state and streamed at /events).
func Example() {
	page := dashboard.NewServer(dashboard.Config{Planned: 18, Delta: 1e-5, TargetEpsilon: 8})
	page.RoundApplied(1, 10, 0, 12*time.Millisecond)
	eps, acc := 0.97, 0.61
	page.Evaluated(metrics.Record{Round: 1, Epsilon: &eps, TestAccuracy: &acc, Delta: 1e-5})
	st := page.State()
	fmt.Printf("%s: %d of %d rounds, epsilon %g of %g at delta %g, accuracy %g\n",
		st.Role, st.Released, st.Planned, *st.Epsilon, st.TargetEpsilon, st.Delta, *st.Evals[0].Accuracy)
	// Output: server: 1 of 18 rounds, epsilon 0.97 of 8 at delta 1e-05, accuracy 0.61
}
